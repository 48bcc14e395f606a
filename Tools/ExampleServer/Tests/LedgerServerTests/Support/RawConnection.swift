import NIOCore
import NIOPosix

/// A plain TCP connection to the server that sends a request and reads what comes back as it comes: what a
/// test of a never-ending response (an event stream) or of a request cut in parts needs.
enum RawConnection {
    typealias Writer = NIOAsyncChannelOutboundWriter<ByteBuffer>

    /// Connects to the server on `port`, lets `send` write the request, and calls `read` with the text
    /// received so far each time more arrives, until `read` returns true or the server closes the
    /// connection. Returns everything received and whether the server closed the connection.
    static func exchange(
        port: Int, send: (Writer) async throws -> Void, until read: (String) async throws -> Bool
    ) async throws -> (text: String, closedByServer: Bool) {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await send(outbound)
            var text = ""
            for try await chunk in inbound {
                text += String(buffer: chunk)
                if try await read(text) { return (text, false) }
            }
            return (text, true)
        }
    }

    /// ``exchange(port:send:until:)`` with a request written at once: an HTTP/1.1 request's text.
    static func exchange(
        port: Int, request: String, until read: (String) async throws -> Bool
    ) async throws -> (text: String, closedByServer: Bool) {
        try await exchange(port: port, send: { try await $0.write(ByteBuffer(string: request)) }, until: read)
    }
}
