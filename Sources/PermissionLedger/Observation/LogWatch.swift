import Foundation
internal import LMDB
import PermissionModel

/// Where the log's head is, as far as this process has written it, and who is waiting for it to move.
///
/// Subscriptions wait here when they have read everything; the writer wakes them after each commit.
/// Writes by other processes are not seen here: waiters also wake after a timeout and read the log.
final class LogWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var head: UInt64 = 0
    private var waiters: [Int: (after: UInt64, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var nextToken = 0
    /// Tokens woken (by their timeout or cancellation) before they started waiting.
    private var wokenEarly: Set<Int> = []
    /// Tokens of calls to `wait` that have not returned.
    private var active: Set<Int> = []

    /// Whether the ledger was closed: waits return at once, and subscriptions end.
    private var closed = false

    /// Whether the ledger was closed (``Ledger/close()``).
    var isClosed: Bool { lock.withLock { closed } }

    /// Marks the ledger closed and wakes everyone waiting, for good.
    func close() {
        lock.lock()
        closed = true
        let woken = waiters
        waiters = [:]
        lock.unlock()
        for waiter in woken.values { waiter.continuation.resume() }
    }

    /// The last seq this process committed, and the last it knows to be durable.
    private var committed: UInt64 = 0
    private var durable: UInt64 = 0
    private var flushFailure: LedgerError?

    /// Records that this process committed through `seq`, not yet flushed to disk.
    func committed(through seq: UInt64) {
        lock.withLock { committed = max(committed, seq) }
    }

    /// The last seq readers of this process may be shown: commits of this process that are not yet durable
    /// (and what follows them) stay hidden, so that no subscriber sees an event a power loss could take back.
    /// `nil` when nothing is waiting for a flush.
    var visibleLimit: UInt64? {
        lock.withLock { committed > durable ? durable : nil }
    }

    /// Why appends fail since a flush to disk failed, if one did.
    var failure: LedgerError? { lock.withLock { flushFailure } }

    /// Records that a flush failed: from now on nothing is durable.
    func failed(_ error: LedgerError) {
        lock.withLock { flushFailure = flushFailure ?? error }
    }

    /// Records that the log reaches `seq` durably and wakes everyone waiting for less.
    func advanced(to seq: UInt64) {
        lock.lock()
        durable = max(durable, seq)
        committed = max(committed, seq)
        head = max(head, seq)
        let woken = waiters.filter { $0.value.after < seq }
        for token in woken.keys { waiters[token] = nil }
        lock.unlock()
        for waiter in woken.values { waiter.continuation.resume() }
    }

    /// Returns once this process has written past `seq`, after `timeout`, or when the task is cancelled,
    /// whichever comes first.
    func wait(after seq: UInt64, timeout: Duration) async {
        let token = lock.withLock {
            nextToken += 1
            active.insert(nextToken)
            return nextToken
        }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.wake(token)
        }
        defer {
            timer.cancel()
            lock.withLock {
                wokenEarly.remove(token)
                active.remove(token)
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if closed || head > seq || wokenEarly.contains(token) {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                waiters[token] = (seq, continuation)
                lock.unlock()
            }
        } onCancel: {
            wake(token)
        }
    }

    private func wake(_ token: Int) {
        lock.lock()
        let waiter = waiters.removeValue(forKey: token)
        if waiter == nil && active.contains(token) { wokenEarly.insert(token) }
        lock.unlock()
        waiter?.continuation.resume()
    }
}
