import Foundation

/// Whether the task that started a piece of work off the cooperative pool was cancelled: the work looks at
/// it between events and stops with `CancellationError`.
final class Cancellation: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false

    func cancel() { lock.withLock { cancelled = true } }

    var isCancelled: Bool { lock.withLock { cancelled } }

    /// Throws `CancellationError` once the task was cancelled.
    func check() throws {
        if isCancelled { throw CancellationError() }
    }

    /// Checks every `interval` calls (`count` counts them), so that a loop over events pays for the lock
    /// once in a while only.
    func check(every interval: UInt64, _ count: UInt64) throws {
        if count % interval == 0 { try check() }
    }
}

/// How often loops over the log look whether their task was cancelled (and report progress).
let cancellationInterval: UInt64 = 1024

/// Runs `body` on a thread of its own, not on the cooperative pool, and waits for it without blocking a
/// thread of the pool: work whose cost grows with the log (verify, digest, export, rebuild, scans, the
/// opening that rebuilds) runs here, so that a server's other tasks go on meanwhile.
///
/// Cancelling the calling task sets the `Cancellation` that `body` receives; `body` looks at it between
/// events and throws `CancellationError`, which this rethrows.
func offPool<T: Sendable>(_ name: String, _ body: @escaping @Sendable (Cancellation) throws -> T) async throws -> T {
    let cancellation = Cancellation()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let work = Work(body)
            startThread(named: name) {
                // The body (and the ledger it holds) is let go before the caller resumes: a caller that drops its
                // last reference to the ledger and opens the same path again must find it closed.
                let result = work.run(cancellation)
                continuation.resume(with: result)
            }
        }
    } onCancel: {
        cancellation.cancel()
    }
}

/// The body of an ``offPool(_:_:)`` call, run once and let go of as soon as it returns.
private final class Work<T: Sendable>: @unchecked Sendable {
    private var body: (@Sendable (Cancellation) throws -> T)?

    init(_ body: @escaping @Sendable (Cancellation) throws -> T) { self.body = body }

    /// Runs the body, unless the task was cancelled first, and releases it (and what it captured) before returning.
    func run(_ cancellation: Cancellation) -> Result<T, any Error> {
        guard let body else { return .failure(CancellationError()) }
        self.body = nil
        return Result { try cancellation.check(); return try body(cancellation) }
    }
}
