import Foundation
import LMDB
import PermissionModel

/// The ledger's single writer thread. Appends that arrive while a commit is under way wait together
/// and are then committed together, in one durable write transaction: one flush to disk serves them
/// all, so throughput rises with the number of concurrent writers while every caller still returns
/// only once its own events are on disk.
///
/// Each request stays all-or-nothing on its own: a request whose events are rejected fails alone and
/// leaves nothing behind, while the other requests of the group are committed.
final class GroupCommitter: @unchecked Sendable {
    struct Request {
        var events: [PermissionEvent]
        var maxRejections: Int
        var complete: @Sendable (Result<Ledger.AppendSummary, any Error>) -> Void
    }

    /// What the writer needs of the ledger, without the ledger itself, so that the thread never keeps
    /// a ledger alive.
    struct Context: Sendable {
        /// Unowned, so that the ledger's environment closes as the ledger goes, not when this thread ends.
        unowned let environment: Environment
        let tables: Tables
        let path: String
        let clock: @Sendable () -> Timestamp
        let watch: LogWatch
        /// Whether commits must be flushed to disk: the environment defers the flush of a commit's meta
        /// page, which the writer leaves to ``Flusher`` (the next group's transaction then runs while the
        /// last one is flushed), or does itself when every append has a transaction of its own.
        let durable: Bool
    }

    /// The most events committed in one shared transaction: bounds the latency a large group adds.
    let maxGroupEvents: Int
    private let context: Context
    private let condition = NSCondition()
    private var pending: [Request] = []
    private var stopping = false
    private var running = true
    private var counts = Ledger.WriterStatistics()

    /// What the writer thread has done so far.
    var statistics: Ledger.WriterStatistics {
        condition.lock()
        defer { condition.unlock() }
        return counts
    }

    /// How many requests wait for the writer thread, and how many it is committing now.
    var queue: (waiting: Int, committing: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (pending.count, committing)
    }
    private var committing = 0

    /// Makes commits durable on a thread of its own, when the environment defers the flush.
    private let flusher: Flusher?

    init(context: Context, maxGroupEvents: Int) {
        self.context = context
        self.maxGroupEvents = max(1, maxGroupEvents)
        flusher = context.durable && maxGroupEvents > 1
            ? Flusher(environment: context.environment, path: context.path, watch: context.watch) : nil
        let thread = Thread { [self] in run() }
        thread.name = "PermissionLedger.writer"
        thread.start()
    }

    /// Queues `request`; its `complete` is called on the writer thread once it is durable or has failed.
    func submit(_ request: Request) {
        condition.lock()
        guard !stopping else {
            condition.unlock()
            request.complete(.failure(LedgerError(.storage, "\(context.path): the ledger is closing")))
            return
        }
        pending.append(request)
        condition.signal()
        condition.unlock()
    }

    /// Finishes what is queued, then ends the writer thread and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while let group = nextGroup() {
            var (results, head) = Self.commit(group, context: context)
            if let flusher, let head {
                flusher.submit(.init(requests: group, results: results, head: head))
            } else {
                if head != nil, context.durable {
                    do {
                        try context.environment.sync(force: true)
                    } catch {
                        let failure = LedgerError(.storage, "\(context.path): flushing the commit to disk failed (\(error)); the events may not be durable")
                        results = group.map { _ in .failure(failure) }
                    }
                }
                if let head { context.watch.advanced(to: head) }
                for (request, result) in zip(group, results) { request.complete(result) }
            }
            condition.lock()
            counts.transactions += 1
            counts.requests += group.count
            counts.events += group.reduce(0) { $0 + $1.events.count }
            counts.largestGroup = max(counts.largestGroup, group.count)
            committing = 0
            condition.unlock()
        }
    }

    /// Waits for requests and takes those that fit in one group (at least one), or `nil` once stopped.
    private func nextGroup() -> [Request]? {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty && !stopping { condition.wait() }
        if pending.isEmpty {
            flusher?.stop()
            running = false
            condition.broadcast()
            return nil
        }
        var taken = 0
        var events = 0
        while taken < pending.count, taken == 0 || events + pending[taken].events.count <= maxGroupEvents {
            events += pending[taken].events.count
            taken += 1
        }
        let group = Array(pending[..<taken])
        pending.removeFirst(taken)
        committing = taken
        return group
    }

    /// Commits a group in one write transaction; returns each request's result and the head afterwards
    /// (`nil` when nothing was committed).
    static func commit(_ group: [Request], context: Context) -> (results: [Result<Ledger.AppendSummary, any Error>], head: UInt64?) {
        var results: [Result<Ledger.AppendSummary, any Error>] = []
        do {
            let head = try context.environment.write { txn in
                // The closure runs again from scratch when the map has to grow.
                results = []
                var head = try Ledger.head(txn.reader, context.tables)
                var store = LMDBStore(txn: txn, tables: context.tables)
                for request in group {
                    do {
                        if request.events.count == 1 || group.count == 1 {
                            // A rejected event writes nothing, so a single event needs no nested transaction
                            // (and a lone request's rejection aborts the whole transaction below).
                            let summary = try apply(request, store: store, head: head, clock: context.clock)
                            head = summary.head
                            results.append(.success(summary))
                        } else {
                            let summary = try txn.nested { child in
                                try apply(request, store: LMDBStore(txn: child, tables: context.tables), head: head, clock: context.clock)
                            }
                            // The nested transaction changed what the shared store may have cached.
                            store = LMDBStore(txn: txn, tables: context.tables)
                            head = summary.head
                            results.append(.success(summary))
                        }
                    } catch let rejected as AppendRejected {
                        if group.count == 1 { throw rejected }
                        results.append(.failure(rejected))
                    }
                }
                return head
            }
            return (results, head.seq)
        } catch let rejected as AppendRejected {
            return ([.failure(rejected)], nil)
        } catch {
            let failure = LedgerError.storage(error, path: context.path)
            return (group.map { _ in .failure(failure) }, nil)
        }
    }

    /// Applies one request's events in order; throws ``AppendRejected`` (having written nothing that
    /// survives) when any is rejected.
    static func apply(
        _ request: Request, store: LMDBStore, head: LogHead, clock: () -> Timestamp,
        progress: ((Int) -> Void)? = nil
    ) throws -> Ledger.AppendSummary {
        var projector = Projector(store: store, head: head)
        var outcomes: [AppendOutcome] = []
        outcomes.reserveCapacity(request.events.count)
        var rejections: [(index: Int, rejection: EventRejection)] = []
        for (index, event) in request.events.enumerated() {
            if let progress, index > 0, index % 10_000 == 0 { progress(index) }
            do {
                outcomes.append(try projector.apply(event, clock: clock))
            } catch let rejection as EventRejection {
                rejections.append((index, rejection))
                if rejections.count >= request.maxRejections { break }
            }
        }
        if !rejections.isEmpty { throw AppendRejected(rejections: rejections) }
        return Ledger.AppendSummary(outcomes: outcomes, head: projector.head)
    }
}

/// The second half of a durable group commit: flushes what the writer thread committed and then
/// completes its requests. One flush serves every group committed since the last, and the writer thread
/// builds the next transaction meanwhile.
final class Flusher: @unchecked Sendable {
    struct Batch {
        var requests: [GroupCommitter.Request]
        var results: [Result<Ledger.AppendSummary, any Error>]
        var head: UInt64
    }

    /// Unowned for the same reason as ``GroupCommitter/Context/environment``.
    private unowned let environment: Environment
    private let path: String
    private let watch: LogWatch
    private let condition = NSCondition()
    private var batches: [Batch] = []
    private var stopping = false
    private var running = true

    init(environment: Environment, path: String, watch: LogWatch) {
        self.environment = environment
        self.path = path
        self.watch = watch
        let thread = Thread { [self] in run() }
        thread.name = "PermissionLedger.flusher"
        thread.start()
    }

    func submit(_ batch: Batch) {
        condition.lock()
        batches.append(batch)
        condition.signal()
        condition.unlock()
    }

    /// Flushes and completes what is queued, then ends the thread and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while batches.isEmpty && !stopping { condition.wait() }
            if batches.isEmpty {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let taken = batches
            batches.removeAll()
            condition.unlock()
            do {
                try environment.sync(force: true)
                watch.advanced(to: taken.map(\.head).max()!)
                for batch in taken {
                    for (request, result) in zip(batch.requests, batch.results) { request.complete(result) }
                }
            } catch {
                // Committed but perhaps not on disk: no caller may be told it is durable.
                let failure = LedgerError(.storage, "\(path): flushing the commit to disk failed (\(error)); the events may not be durable")
                for batch in taken {
                    for request in batch.requests { request.complete(.failure(failure)) }
                }
            }
        }
    }
}

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

    /// Records that the log reaches `seq` and wakes everyone waiting for less.
    func advanced(to seq: UInt64) {
        lock.lock()
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
                if head > seq || wokenEarly.contains(token) {
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
