import Hummingbird

/// A request that failed, answered with its status and the body `{"error": MESSAGE}`, plus a list of lines
/// under ``details`` when there is more than one thing to say (every rejected line of a body, say).
///
/// Messages name where and why (a line, a parameter) in the library's words, which never repeat a
/// personal value; they go to the client only, never to the log.
struct APIError: HTTPResponseError {
    /// A further list in the body: its key and its lines.
    struct Details: Sendable {
        var key: String
        var lines: [String]
    }

    var status: HTTPResponse.Status
    var message: String
    var details: Details?

    init(_ status: HTTPResponse.Status, _ message: String, details: Details? = nil) {
        self.status = status
        self.message = message
        self.details = details
    }

    /// 400: a parameter or the body cannot be used as given.
    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, message) }

    /// 404: what the request names does not exist at the point asked.
    static func notFound(_ message: String) -> APIError { APIError(.notFound, message) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var body: [String: ErrorField] = ["error": .text(message)]
        if let details { body[details.key] = .lines(details.lines) }
        return JSONResponse.encoding(body, status: status)
    }
}

/// A value of an error body: a message or a list of lines.
private enum ErrorField: Encodable {
    case text(String)
    case lines([String])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .lines(let lines): try container.encode(lines)
        }
    }
}
