import Hummingbird
import Logging
import PermissionLedger
import ServiceLifecycle

/// `GET /events/stream?after=N[&subject=S]`: the events after `seq` N (0 by default) in log order, then
/// every event as it is committed, as server-sent events (`id: SEQ`, `data: JSON LINE`).
///
/// A `Last-Event-ID` header (what a browser's `EventSource` sends when it reconnects) takes the place of
/// `after`. The stream ends when the client goes away, and, on graceful shutdown, before the server stops:
/// the response is finished cleanly so that the client reconnects with the last id it saw.
///
/// The stream watches the connection to end when the client closes it, which needs a live server:
/// test it with HummingbirdTesting's `.live` setup, not `.router`.
struct EventStreamRoute: Sendable {
    /// The header a reconnecting `EventSource` sends with the last `id` it received.
    static let lastEventID = HTTPFields.Element.Name("Last-Event-ID")!

    let ledger: Ledger
    let pollInterval: Duration

    func handle(_ request: Request, context: some RequestContext) throws -> Response {
        let parameters = try QueryParameters(request, allowed: ["after", "subject"])
        let header = try request.headers[Self.lastEventID].map { text throws(APIError) in
            try QueryParameters.seq(text, name: "Last-Event-ID")
        }
        let after = try header ?? parameters.seq("after") ?? 0
        guard !ledger.isClosed else { throw APIError(.serviceUnavailable, "the server is shutting down; try again later") }
        let messages = ledger.eventMessages(after: after, subject: parameters.text("subject"), pollInterval: pollInterval)
            .cancelOnGracefulShutdown()
        let logger = context.logger
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            do {
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    for try await message in messages {
                        try await writer.write(message.buffer)
                    }
                }
            } catch is CancellationError {
                // The client went away: there is no one left to finish the response for.
                return
            } catch let error as LedgerError {
                // The response has begun: end it, and the client reconnects from the last id it saw.
                logger.error("event stream ended by a ledger failure", metadata: ["ledger.error": "\(error.description)"])
            }
            try await writer.finish(nil)
        })
    }
}
