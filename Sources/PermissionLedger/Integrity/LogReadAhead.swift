import Foundation
internal import LMDB

/// The stored log read, checked against its hash chain and decoded on a thread of its own, a few batches
/// ahead of the thread that applies it: what a rebuild of the projections reads with.
///
/// Reading is about a sixth of a rebuild's work (the SHA-256 of every record, decoding, copying each
/// record out of the map). On a machine with a second core it overlaps with applying the rules and
/// writing the tables, which is the rest.
///
/// The reader has a read transaction of its own. It sees the same log as the writer that started before
/// it: the writer holds LMDB's write lock, so nothing can be committed between the two, and a rebuild
/// changes no event. Damage the reader finds (a broken chain, an undecodable record, an LMDB error) is
/// thrown to the applying thread after every event before it, so the first damage in log order is the
/// one reported, wherever it is found.
final class LogReadAhead: @unchecked Sendable {
    typealias Item = (event: PermissionEvent, record: [UInt8], hash: ChainHash)

    private let condition = NSCondition()
    private var batches: [[Item]] = []
    /// Batches the applying side is done with: the reader frees them, so that freeing every event's
    /// strings and arrays is not the applying thread's work as well.
    private var spent: [[Item]] = []
    private var readerEnded = false
    private var failure: (any Error)?
    private var cancelled = false
    private let depth: Int
    /// The reader's; it lets go of it before it says it has ended, so that the environment is not held by
    /// a thread on its way out when the rebuild returns (a ledger released then would stay open a moment).
    private var environment: Environment?

    private init(depth: Int, environment: Environment) {
        self.depth = depth
        self.environment = environment
    }

    /// Calls `body` with each stored event (with its `seq`), its record and its chain hash, in log order,
    /// exactly as ``StoredLog/forEach(_:_:_:)`` does, reading on another thread `batchSize` events at a time
    /// and at most `depth` batches ahead. The reading thread has let go of the environment when this returns
    /// or throws.
    ///
    /// - Returns: `false`, having called `body` for no event, when the reading thread could not begin a
    ///   read transaction because every reader slot of the environment is taken: read on this thread then.
    static func forEach(
        _ environment: Environment, _ tables: Tables, batchSize: Int = 256, depth: Int = 8,
        _ body: (PermissionEvent, [UInt8], ChainHash) throws -> Void
    ) throws -> Bool {
        precondition(batchSize > 0 && depth > 0)
        let reader = LogReadAhead(depth: depth, environment: environment)
        startThread(named: "ledger-log-reader") { reader.read(tables, batchSize: batchSize) }
        // Also when `body` throws: the reader stops at its next batch, and its read transaction ends before
        // the caller's write transaction does (a map grown after a failed write needs every transaction gone).
        defer { reader.cancelAndWait() }
        var done: [Item] = []
        do {
            while let batch = try reader.next(handingBack: &done) {
                for item in batch { try body(item.event, item.record, item.hash) }
                done = batch
            }
        } catch is NoReaderSlot {
            return false
        }
        return true
    }

    private struct Cancelled: Error {}
    /// The reader could not begin its transaction for want of a reader slot, before it read anything.
    private struct NoReaderSlot: Error {}

    private func read(_ tables: Tables, batchSize: Int) {
        var failure: (any Error)?
        var batch: [Item] = []
        batch.reserveCapacity(batchSize)
        var began = false
        do {
            try environment!.read { txn in
                began = true
                try StoredLog.forEach(txn, tables) { event, record, hash in
                    batch.append((event, record, hash))
                    if batch.count == batchSize {
                        guard send(batch) else { throw Cancelled() }
                        batch = []
                        batch.reserveCapacity(batchSize)
                    }
                }
            }
        } catch is Cancelled {
            batch = []
        } catch let error as LMDBError where error == .readersFull && !began {
            failure = NoReaderSlot()
        } catch {
            failure = error
        }
        // The events read before any damage go first: the rules may find damage earlier in the log.
        if !batch.isEmpty { _ = send(batch) }
        environment = nil
        condition.lock()
        self.failure = failure
        readerEnded = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues a batch, waiting while `depth` batches wait already; `false` once the applying side has stopped.
    private func send(_ batch: [Item]) -> Bool {
        condition.lock()
        while batches.count >= depth && !cancelled { condition.wait() }
        guard !cancelled else {
            condition.unlock()
            return false
        }
        batches.append(batch)
        condition.broadcast()
        var spent: [[Item]] = []
        swap(&spent, &self.spent)
        condition.unlock()
        // The batches applied since the last call are freed here, on the reader's thread, out of the lock.
        spent.removeAll()
        return true
    }

    /// The next batch in log order, after handing back the one applied before it (`done`, left empty);
    /// `nil` after the last one; throws what the reader met after the batches before it.
    private func next(handingBack done: inout [Item]) throws -> [Item]? {
        condition.lock()
        defer { condition.unlock() }
        if !done.isEmpty {
            spent.append(done)
            done = []
        }
        while batches.isEmpty && !readerEnded { condition.wait() }
        if !batches.isEmpty {
            condition.broadcast()
            return batches.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    private func cancelAndWait() {
        condition.lock()
        cancelled = true
        batches.removeAll()
        spent.removeAll()
        condition.broadcast()
        while !readerEnded { condition.wait() }
        condition.unlock()
    }
}
