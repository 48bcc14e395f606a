import Hummingbird
import Logging
import PermissionLedger

/// `POST /events`: appends the JSON Lines of the body, all or nothing, and answers once they are durable.
///
/// | status | when |
/// |---|---|
/// | 200 | appended: ``AppendResult`` |
/// | 400 | a line does not decode: `{"error": "line N: reason", "problems": [...]}`, nothing appended |
/// | 413 | the body is larger than the configured limit |
/// | 422 | the rules reject events: `{"error": "line N: reason", "rejections": [...]}`, nothing appended |
/// | 503 | the ledger is closing (the server is shutting down) |
/// | 500 | the ledger could not be written |
struct AppendRoute: Sendable {
    let ledger: Ledger
    let maxBodyBytes: Int

    func handle(_ request: Request, context: some RequestContext) async throws -> Response {
        let body = try await collectBody(of: request)
        let lines = try EventLines(body: body)
        do {
            let summary = try await ledger.append(lines.events, maxRejections: EventLines.maxReported + 1)
            return JSONResponse.text(AppendResult(summary).json)
        } catch let rejected as AppendRejected {
            let named = rejected.rejections.map { EventLines.naming(line: lines.lineNumbers[$0.index], $0.rejection.description) }
            context.logger.debug("append rejected", metadata: ["rejections": "\(rejected.rejections.count)"])
            throw APIError(.unprocessableContent, named[0], details: .init(key: "rejections", lines: EventLines.capped(named)))
        } catch let error as LedgerError {
            throw LedgerFailure.apiError(for: error, logger: context.logger)
        }
    }

    /// The body, refused with 413 when it is (or announces itself as) larger than ``maxBodyBytes``.
    private func collectBody(of request: Request) async throws -> ByteBuffer {
        let tooLarge = APIError(.contentTooLarge, "the body is larger than \(maxBodyBytes) bytes; send the events in smaller batches")
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            throw tooLarge
        }
        var request = request
        do {
            return try await request.collectBody(upTo: maxBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw tooLarge
        }
    }
}
