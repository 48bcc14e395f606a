import Hummingbird
import Logging
import PermissionLedger

/// The answer to a ``LedgerError``: 503 once the ledger is closing or closed (the server is shutting down),
/// 404 for a point or a thing that does not exist, 500 for anything else.
///
/// A 500's reason goes to the log, not to the client: the library's messages name the ledger's path and
/// sometimes a `seq`, never a personal value (a subject, a handle, a name).
enum LedgerFailure {
    static func apiError(for error: LedgerError, logger: Logger) -> APIError {
        if error.kind == .closed {
            return APIError(.serviceUnavailable, "the server is shutting down; try again later")
        }
        if error.kind == .notFound {
            return .notFound(error.description)
        }
        logger.error("ledger failure", metadata: ["ledger.error": "\(error.description)"])
        return APIError(.internalServerError, "the ledger could not be read or written; the server's log says why")
    }

    /// Runs `body`, turning a ``LedgerError`` it throws into an ``APIError``, and a question abbreviation that
    /// names no question into a 404 (several: a 400, as the whole id is needed).
    static func mapping<T>(logger: Logger, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LedgerError {
            throw apiError(for: error, logger: logger)
        } catch let unresolved as QuestionReference.Unresolved {
            throw unresolved.kind == .noMatch ? APIError.notFound(unresolved.description) : APIError.badRequest(unresolved.description)
        }
    }
}
