import Foundation
internal import LMDB
import Logging
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
        /// The events come from another ledger's log (a migration): the text rules of stored events apply to
        /// them, not those of events appended from now on (``Projector/checksAppendedText``).
        var storedElsewhere = false
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
        /// Flushes commits to disk, when they must be: the environment defers the flush of a commit's meta
        /// page, which the writer leaves to the flusher thread (the next group's transaction then runs while the
        /// last one is flushed), or does itself when every append has a transaction of its own. Its own
        /// descriptor sees a failed write-back that a later commit's flush reported first (``DataFileSync``).
        let fileSync: DataFileSync?
        /// What the ledger's last committed write learned of the tables.
        let writerCache: CarriedWriterCache
        /// Where commits are counted and sized.
        let metrics: LedgerMetrics
        /// Where a failed commit or flush is logged (never with an event's content).
        let logger: Logger
    }

    /// The most events committed in one shared transaction: bounds the latency a large group adds.
    let maxGroupEvents: Int
    private let context: Context
    private let lock = NSLock()
    private var counts = Ledger.WriterStatistics()
    /// The writer thread and its queue of requests.
    private var worker: WorkerThread<Request>!
    /// Makes commits durable on a thread of its own, when the environment defers the flush.
    private let flusher: WorkerThread<FlushBatch>?

    /// Requests committed by the writer, waiting for the flush that makes them durable.
    struct FlushBatch {
        var requests: [Request]
        var results: [Result<Ledger.AppendSummary, any Error>]
        var head: UInt64
    }

    /// What the writer thread has done so far.
    var statistics: Ledger.WriterStatistics { lock.withLock { counts } }

    /// How many requests wait for the writer thread, and how many it is committing now.
    var queue: (waiting: Int, committing: Int) {
        let load = worker.load
        return (load.waiting, load.working)
    }

    init(context: Context, maxGroupEvents: Int) {
        self.context = context
        self.maxGroupEvents = max(1, maxGroupEvents)
        // One flush serves every group committed since the last, while the writer builds the next transaction.
        flusher = context.fileSync != nil && maxGroupEvents > 1
            ? WorkerThread(name: "ledger-flusher", take: { $0.count }) { batches in
                Self.flush(batches, context: context)
            } : nil
        let limit = self.maxGroupEvents
        worker = WorkerThread(name: "ledger-writer", take: { pending in
            // The requests that fit in one group, at least one.
            var taken = 0
            var events = 0
            while taken < pending.count, taken == 0 || events + pending[taken].events.count <= limit {
                events += pending[taken].events.count
                taken += 1
            }
            return taken
        }) { [unowned self] group in
            commitAndHandOn(group)
        }
    }

    /// Queues `request`; its `complete` is called on the writer or flusher thread once it is durable or
    /// has failed.
    func submit(_ request: Request) {
        if let failure = context.watch.failure {
            request.complete(.failure(failure))
            return
        }
        guard worker.submit(request) else {
            request.complete(.failure(LedgerError(.closed, "\(context.path): the ledger is closed; open it again to go on")))
            return
        }
    }

    /// Finishes what is queued, then ends the writer and flusher threads and waits for them.
    func stop() {
        worker.stop()
        flusher?.stop()
    }

    /// Commits a group, then hands it to the flusher, or flushes it here when there is no flusher.
    private func commitAndHandOn(_ group: [Request]) {
        lock.withLock {
            counts.transactions += 1
            counts.requests += group.count
            counts.events += group.reduce(0) { $0 + $1.events.count }
            counts.largestGroup = max(counts.largestGroup, group.count)
        }
        // After a failed flush nothing more is committed: what the disk dropped may lie under it.
        if let failure = context.watch.failure {
            for request in group { request.complete(.failure(failure)) }
            return
        }
        let (results, head) = Self.commit(group, context: context)
        recordMetrics(group, results: results, head: head)
        guard let head else {
            for (request, result) in zip(group, results) { request.complete(result) }
            return
        }
        context.watch.committed(through: head)
        let batch = FlushBatch(requests: group, results: results, head: head)
        if let flusher {
            if !flusher.submit(batch) {
                for request in group { request.complete(.failure(LedgerError(.storage, "\(context.path): the ledger is closing"))) }
            }
        } else {
            Self.flush([batch], context: context)
        }
    }

    private func recordMetrics(_ group: [Request], results: [Result<Ledger.AppendSummary, any Error>], head: UInt64?) {
        let metrics = context.metrics
        metrics.commitGroupSize.record(group.count)
        metrics.commitEvents.record(group.reduce(0) { $0 + $1.events.count })
        let rejected = results.count { if case .failure(let error) = $0 { error is AppendRejected } else { false } }
        if rejected > 0 { metrics.rejectedAppends.increment(by: rejected) }
        guard let head else { return }
        metrics.commits.increment()
        metrics.headSeq.record(head)
        metrics.mapBytes.record(context.environment.mapSize)
        if let used = try? context.environment.usedSize { metrics.usedBytes.record(used) }
    }

    /// Flushes what the writer committed (when the ledger is durable), then completes its requests. A
    /// failed flush fails them, and every later append, until the ledger is opened again.
    private static func flush(_ batches: [FlushBatch], context: Context) {
        var failure = context.watch.failure
        if failure == nil, let fileSync = context.fileSync {
            do {
                try flushToDisk(fileSync, watch: context.watch, path: context.path)
            } catch {
                failure = error
                context.logger.critical("flushing commits to disk failed; every later append fails until the ledger is opened again",
                                        metadata: ["path": "\(context.path)", "error": "\(error)"])
            }
        }
        if failure == nil { context.watch.advanced(to: batches.map(\.head).max()!) }
        for batch in batches {
            for (request, result) in zip(batch.requests, batch.results) {
                if let failure, case .success = result {
                    request.complete(.failure(failure))
                } else {
                    request.complete(result)
                }
            }
        }
    }

    /// Flushes every commit so far to disk. A failure is recorded in `watch`, so that every later append
    /// fails too: the commits are perhaps not on disk, and after a failed `fdatasync` Linux may report
    /// the next one as a success. The failure may be one that a commit's own flush met first (that commit
    /// failed with it), since the last flush here: what it lost may belong to the commits flushed now.
    static func flushToDisk(_ fileSync: DataFileSync, watch: LogWatch, path: String) throws(LedgerError) {
        do {
            try fileSync.sync()
        } catch {
            let failure = LedgerError(.storage, "\(path): flushing the commit to disk failed (\(error)); the events may not be durable")
            watch.failed(failure)
            throw failure
        }
    }

    /// Makes the data keys of the transaction being written durable before it commits. A failed flush of the key
    /// store is recorded in `watch` as a failed flush of the data file is: a key that a commit already names may be
    /// what the disk dropped, so every later append fails until the ledger is opened again.
    static func syncNewKeys(_ tables: Tables, watch: LogWatch, path: String) throws(LedgerError) {
        do {
            try tables.keyRing?.syncNewKeys()
        } catch {
            let failure = LedgerError(.storage, "\(path): flushing the commit to disk failed (\(error.message)); the events may not be durable")
            watch.failed(failure)
            throw failure
        }
    }

    /// Commits a group in one write transaction; returns each request's result and the head afterwards
    /// (`nil` when nothing was committed).
    static func commit(_ group: [Request], context: Context) -> (results: [Result<Ledger.AppendSummary, any Error>], head: UInt64?) {
        var results: [Result<Ledger.AppendSummary, any Error>] = []
        do {
            let head = try context.writerCache.write(context.environment) { txn, cache in
                // The closure runs again from scratch when the map has to grow: the data keys of a run that did not
                // commit are destroyed, and this run's when it throws.
                return try KeyRing.writing(txn, context.tables) {
                    results = []
                    var head = try Ledger.head(txn.reader, context.tables)
                    var store = LMDBStore(txn: txn, tables: context.tables, cache: cache)
                    for request in group {
                        do {
                            if group.count == 1 || (request.events.count == 1 && request.events[0].erasedFields == nil) {
                                // A rejected event writes nothing, so a single event needs no nested transaction
                                // (and a lone request's rejection aborts the whole transaction below). An event
                                // in its erased form is written before it is rejected (``AwaitedErasures``).
                                let summary = try apply(request, store: store, head: head, clock: context.clock)
                                head = summary.head
                                results.append(.success(summary))
                            } else {
                                let kept = context.tables.keyRing?.uncommittedCount ?? 0
                                let summary: Ledger.AppendSummary
                                do {
                                    summary = try txn.nested { child in
                                        try apply(request, store: LMDBStore(txn: child, tables: context.tables), head: head, clock: context.clock)
                                    }
                                } catch {
                                    // What the nested transaction sealed is gone with it, and so are the keys it added.
                                    try context.tables.keyRing?.destroyUncommitted(after: kept)
                                    throw error
                                }
                                // The nested transaction changed what the shared store may have cached.
                                cache.removeAll()
                                store = LMDBStore(txn: txn, tables: context.tables, cache: cache)
                                head = summary.head
                                results.append(.success(summary))
                            }
                        } catch let rejected as AppendRejected {
                            if group.count == 1 { throw rejected }
                            results.append(.failure(rejected))
                        }
                    }
                    // The data keys this transaction made are durable before it commits the records they seal.
                    try syncNewKeys(context.tables, watch: context.watch, path: context.path)
                    return head
                }
            }
            // The keys an erasure of this transaction marked destroyed are overwritten before its append returns.
            try context.tables.keyRing?.completeDestruction(context.environment, context.tables)
            return (results, head.seq)
        } catch let rejected as AppendRejected {
            return ([.failure(rejected)], nil)
        } catch {
            let failure = LedgerError.storage(error, path: context.path)
            if failure.kind != .closed {
                context.logger.error("a write transaction failed; its appends failed with it",
                                     metadata: ["path": "\(context.path)", "error": "\(failure.message)", "appendCalls": "\(group.count)"])
            }
            return (group.map { _ in .failure(failure) }, nil)
        }
    }

    /// Applies one request's events in order; throws ``AppendRejected`` (having written nothing that
    /// survives) when any is rejected.
    static func apply(
        _ request: Request, store: LMDBStore, head: LogHead, clock: () -> Timestamp,
        progress: ((Int) -> Void)? = nil
    ) throws -> Ledger.AppendSummary {
        var outcomes: [AppendOutcome] = []
        outcomes.reserveCapacity(request.events.count)
        var events = request.events.makeIterator()
        // The events are all given: their salts and commitments can be made ahead of the rules, on a second thread.
        let ahead = store.tables.keyRing.flatMap { CommitmentsAhead(request.events, secrets: $0.secrets) }
        store.commitmentsAhead = ahead
        defer {
            ahead?.cancel()
            store.commitmentsAhead = nil
        }
        var index = 0
        let head = try apply(
            {
                store.pulledIndex = index
                index += 1
                return events.next()
            }, store: store, head: head, clock: clock, maxRejections: request.maxRejections,
            storedElsewhere: request.storedElsewhere, progress: progress, outcome: { outcomes.append($0) })
        return Ledger.AppendSummary(outcomes: outcomes, head: head)
    }

    /// Applies events in order as `next` gives them, one at a time, until it returns `nil`, and returns
    /// the head afterwards. Each event's outcome goes to `outcome`; a rejected event's index and reason
    /// go to `rejected` at once (before `next` is called again), and checking goes on with the events
    /// after it until `maxRejections` are rejected. Then ``AppendRejected`` is thrown (with those
    /// rejections): the caller aborts the transaction, so that nothing of the events survives.
    ///
    /// An event given in its erased form is written, and rejected only once `next` has given every event
    /// when no erasure then covers it as it names (``AwaitedErasures``): its rejection goes to `rejected`
    /// then, after the events that followed it. Such an event is never alone in an append that shares a
    /// transaction with others unnested (see ``commit(_:context:)``).
    ///
    /// What `next` throws is rethrown as it is, after the erased events pulled until then whose erasure is
    /// missing went to `rejected`, as at the end of the stream: a caller that throws at the end of its input
    /// (as `import` does when lines did not parse) reports them with its own problems.
    ///
    /// Keeps nothing per event: memory stays bounded however many events `next` gives (the erased events'
    /// groups are one per erasure they name).
    static func apply(
        _ next: () throws -> PermissionEvent?, store: LMDBStore, head: LogHead, clock: () -> Timestamp,
        maxRejections: Int, storedElsewhere: Bool = false, progress: ((Int) -> Void)? = nil,
        outcome: (AppendOutcome) -> Void, rejected: (Int, EventRejection) -> Void = { _, _ in }
    ) throws -> LogHead {
        var projector = Projector(store: store, head: head)
        projector.checksAppendedText = !storedElsewhere
        var rejections: [(index: Int, rejection: EventRejection)] = []
        var awaited = AwaitedErasures(indexLimit: maxRejections)
        var index = 0
        /// Reports the erased events whose erasure is missing, once every event is pulled: as many as are
        /// reported at most, since they may come before the rejections found so far, which the first
        /// `maxRejections` in the order of the stream then keep.
        func rejectErasedWithoutErasure() throws {
            guard rejections.count < maxRejections, !awaited.isEmpty else { return }
            for (index, rejection) in try awaited.rejections(store.txn.reader, store.tables, limit: maxRejections) {
                rejections.append((index, rejection))
                rejected(index, rejection)
            }
            rejections.sort { $0.index < $1.index }
            rejections = Array(rejections.prefix(maxRejections))
        }
        func pull() throws -> PermissionEvent? {
            do {
                return try next()
            } catch {
                // A caller that throws at the end of its input, having found problems of its own, gets these too.
                try rejectErasedWithoutErasure()
                throw error
            }
        }
        while let event = try pull() {
            if let progress, index > 0, index % 10_000 == 0 { progress(index) }
            let erased = event.erasedFields == nil ? nil : (type: event.type.rawValue, subject: event.subject, mark: event.erased)
            do {
                let applied = try projector.apply(event, clock: clock)
                if let erased, case .appended = applied {
                    awaited.note(index: index, type: erased.type, subject: erased.subject, mark: erased.mark,
                                 seq: projector.head.seq, recordedAt: projector.head.recordedAt!)
                }
                outcome(applied)
            } catch let rejection as EventRejection {
                rejections.append((index, rejection))
                rejected(index, rejection)
                if rejections.count >= maxRejections { break }
            }
            index += 1
        }
        // Every event was pulled: the erasures the erased ones wait for are in the ledger now, or never.
        try rejectErasedWithoutErasure()
        if !rejections.isEmpty { throw AppendRejected(rejections: rejections) }
        try store.finishWriting()
        return projector.head
    }
}
