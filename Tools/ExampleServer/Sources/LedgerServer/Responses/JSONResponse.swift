import Foundation
import Hummingbird

/// Responses whose body is JSON text.
enum JSONResponse {
    /// A response with `text`, already JSON, as its body, followed by a newline as the tool writes it.
    static func text(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(text.utf8.count + 1)
        buffer.writeString(text)
        buffer.writeString("\n")
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
    }

    /// A response with `value` encoded as JSON (keys sorted, so that equal values give equal bytes).
    static func encoding(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers and arrays of them always encode.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return text(String(decoding: data, as: UTF8.self), status: status)
    }
}
