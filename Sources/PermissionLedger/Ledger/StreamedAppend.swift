internal import LMDB
import PermissionModel

extension Ledger {
    /// What a streamed append did, in counts only: it keeps nothing per event, however many were streamed.
    public struct StreamedAppendSummary: Hashable, Sendable {
        /// How many events were appended.
        public var appended: Int
        /// How many were duplicates (no-ops: the same id and content, or the same answer again).
        public var duplicates: Int
        /// The log's head afterwards.
        public var head: LogHead

        /// How many events the stream gave: appended and duplicates.
        public var events: Int { appended + duplicates }
    }

    /// The least free space, in bytes, ``appendSynchronously(streaming:reservingBytes:maxRejections:progress:onRejection:)``
    /// makes in the memory map by default before it pulls the first event: 1 GiB. By default it makes as much
    /// as the ledger's file system can still take, when that is more.
    public static let defaultStreamReserve = 1 << 30

    /// How many events a streamed append applies between looks at how much of the map it holds resident
    /// (a read of `/proc/self/statm`, a few microseconds). Each event can map several large page-cache
    /// folios (up to 1 MiB each on Linux 6.18), so looking seldom lets the map overshoot its budget.
    static let streamResidencyCheckInterval = 32
    /// How many bytes of the map (the pages that the rules and indexes read) a streamed append lets become
    /// resident before it releases them (see `Environment.ResidencyBudget`): without that, its resident memory
    /// would grow with the ledger, since each event reads a dozen B-trees at random keys.
    static let streamResidencyBudget = 192 << 20

    /// Appends the events a stream gives, all or nothing in one write transaction, pulling them one at a
    /// time: memory stays bounded however many events there are (no event is kept once applied, and the
    /// summary holds counts, not an outcome per event). Blocks the calling thread until the events are
    /// durable, like ``appendSynchronously(_:maxRejections:progress:)``.
    ///
    /// Each event is checked against every rule of docs/spec/EVENTS.md, as left by the events before it, as soon as
    /// it is pulled. Duplicates are accepted as no-ops. After a rejection the following events are still
    /// checked, so that one run reports many problems, until `maxRejections` are rejected; then the
    /// transaction is aborted. The write transaction is that of any synchronous append: it waits for the
    /// writer thread's current group, and appends from other tasks wait until the stream is done.
    ///
    /// The memory map cannot grow while the transaction is open (LMDB grows it between transactions,
    /// and a stream cannot be pulled a second time), so room for the whole stream is made first. By
    /// default the map is grown until everything the ledger's file system can still take fits in it beyond
    /// the ledger's data (at least ``defaultStreamReserve``; the map is at most 1 TiB): the data file can
    /// never outgrow that, so any stream the disk can hold fits, and a full disk fails as a full disk. The
    /// map is address space, not memory or disk; when this process may not map that much (`ulimit -v`),
    /// the most it may, down to ``defaultStreamReserve``. Should the map fill all the same, nothing is
    /// written and ``LedgerError`` `.storage` says so.
    ///
    /// ```swift
    /// var lines = try String(contentsOfFile: "events.jsonl", encoding: .utf8).split(separator: "\n").makeIterator()
    /// let summary = try ledger.appendSynchronously(streaming: {
    ///     while let line = lines.next() {
    ///         if let event = try EventJSON.decode(line: String(line)) { return event }
    ///     }
    ///     return nil
    /// }, onRejection: { index, rejection in print("event \(index + 1): \(rejection)") })
    /// ```
    ///
    /// - Parameters:
    ///   - next: gives the next event, or `nil` at the end of the stream. Called on the calling thread,
    ///     inside the write transaction: it must not write to this ledger. What it throws aborts the
    ///     transaction (nothing is written) and is rethrown as it is: a caller that finds problems of its
    ///     own in the input (lines that do not parse, say) can keep returning the events that follow, to
    ///     have them checked too, and throw at the end.
    ///   - reservingBytes: the free space the memory map must have, beyond the ledger's data, before the
    ///     first event is pulled; the map is grown to it when it has less, never shrunk. `nil` (the
    ///     default): what the file system can still take (see above).
    ///   - maxRejections: the most rejected events; the append stops at that many and throws.
    ///   - progress: called with the number of events checked so far, every 10,000 events.
    ///   - onRejection: called with a rejected event's index in the stream (0 for the first event `next`
    ///     gave) and the reason, right after `next` gave it and before `next` is called again, so that a
    ///     caller can name where the event came from without keeping a place for every event. An event given
    ///     in its erased form is rejected only when the stream ends (or `next` throws), when the erasure it
    ///     names has not come: those rejections come then, by index, and may name any event of the stream
    ///     (up to `maxRejections` of them; the thrown ``AppendRejected`` keeps the first `maxRejections` of all
    ///     in the order of the stream).
    /// - Returns: how many events were appended and how many were duplicates, and the new head.
    /// - Throws: ``AppendRejected`` listing the rejected events (at most `maxRejections`, each also given
    ///   to `onRejection`) once the stream ends or the limit is reached; nothing was written. What `next`
    ///   throws; nothing was written. ``LedgerError`` when the ledger cannot be written.
    @discardableResult
    public func appendSynchronously(
        streaming next: () throws -> PermissionEvent?,
        reservingBytes: Int? = nil,
        maxRejections: Int = 100,
        progress: ((Int) -> Void)? = nil,
        onRejection: (_ index: Int, _ rejection: EventRejection) -> Void = { _, _ in }
    ) throws -> StreamedAppendSummary {
        guard !options.readOnly else { throw LedgerError.readOnly(path: path) }
        if let failure = watch.failure { throw failure }
        let reserved: Int
        do {
            reserved = try reserveForStream(reservingBytes)
        } catch {
            throw LedgerError.storage(error, path: path)
        }
        /// What `next` threw, told apart from the storage's errors.
        struct Pulled: Error { var error: any Error }
        /// The transaction's body was started a second time: the map filled and was grown.
        struct Restarted: Error {}
        var runs = 0
        do {
            let summary = try environment.write { txn in
                // `write` runs its body again, from scratch, after growing a full map: the events pulled
                // the first time are gone, so this append fails instead (having written nothing).
                runs += 1
                guard runs == 1 else { throw Restarted() }
                // The data keys of a write that did not commit are destroyed, and this one's when it throws.
                return try KeyRing.writing(txn, tables) {
                    var summary = StreamedAppendSummary(appended: 0, duplicates: 0, head: .empty)
                    var pulled = 0
                    var residency = Environment.ResidencyBudget(environment, bytes: Self.streamResidencyBudget)
                    summary.head = try GroupCommitter.apply(
                        {
                            pulled += 1
                            if pulled.isMultiple(of: Self.streamResidencyCheckInterval) {
                                residency.releaseIfOverBudget()
                            }
                            do {
                                return try next()
                            } catch {
                                throw Pulled(error: error)
                            }
                        },
                        // Caches of 200,000 question definitions (the default) would take some 200 MB.
                        store: LMDBStore(txn: txn, tables: tables, cacheLimit: options.streamCacheLimit), head: try Self.head(txn.reader, tables),
                        clock: options.clock, maxRejections: maxRejections, progress: progress,
                        outcome: { outcome in
                            switch outcome {
                            case .appended: summary.appended += 1
                            case .duplicate: summary.duplicates += 1
                            }
                        },
                        rejected: onRejection)
                    // The data keys this transaction made are durable before it commits the records they seal.
                    try GroupCommitter.syncNewKeys(tables, watch: watch, path: path)
                    return summary
                }
            }
            try tables.keyRing?.completeDestruction(environment, tables)
            try finishSynchronousCommit(through: summary.head.seq)
            return summary
        } catch let pulled as Pulled {
            throw pulled.error
        } catch let rejected as AppendRejected {
            throw rejected
        } catch is Restarted {
            throw LedgerError(.storage, reservingBytes == nil ? """
                \(path): the events need more room than the ledger's file system has (\(reserved) bytes were \
                free); nothing was written; make room on the disk and append again
                """ : """
                \(path): the memory map filled during a streamed append, and it cannot grow while a stream is \
                applied; nothing was written; append again reserving more than \(reserved) bytes
                """)
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    /// Makes room in the map for a streamed append: `bytes`, or by default what the file system can still
    /// take, halved while this process may not map that much, down to ``defaultStreamReserve``. Returns the
    /// free space made.
    private func reserveForStream(_ bytes: Int?) throws(LMDBError) -> Int {
        if let bytes {
            try environment.reserve(freeBytes: max(0, bytes))
            return max(0, bytes)
        }
        var wanted = max(Self.defaultStreamReserve, environment.fileSystemAvailableBytes ?? 0)
        while true {
            do {
                try environment.reserve(freeBytes: wanted)
                return wanted
            } catch where error == .outOfMemory && wanted > Self.defaultStreamReserve {
                wanted = max(Self.defaultStreamReserve, wanted / 2)
            }
        }
    }
}
