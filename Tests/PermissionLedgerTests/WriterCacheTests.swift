import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// A write transaction starts from what the ledger's last commit learned of the tables, and only when it
/// follows that commit directly. (Another process writing in between: `MultiProcessTests`.)
@Suite struct WriterCacheTests {
    typealias Events = GroupCommitTests

    /// The id the next write transaction of `ledger` gets: one more than the last committed snapshot's.
    static func nextTransaction(_ ledger: Ledger) throws -> Int {
        try ledger.environment.read { try $0.snapshotID() } + 1
    }

    @Test func theCarriedCacheGoesOnlyToTheTransactionRightAfterItsCommit() {
        let carried = CarriedWriterCache(limit: 10)
        let cache = WriterCache()
        cache.subjectsSeen.insert(ByteKey(Array("kid-1".utf8)))

        carried.keep(cache, committedTransaction: 7)
        #expect(carried.take(forTransaction: 9) !== cache, "a write committed in between")
        #expect(carried.take(forTransaction: 8) !== cache, "a take empties the slot, whichever transaction asked")

        carried.keep(cache, committedTransaction: 7)
        #expect(carried.take(forTransaction: 8) === cache)
        #expect(carried.take(forTransaction: 8) !== cache, "a transaction run again (the map grew) starts empty")

        for n in 0..<10 { cache.subjectsSeen.insert(ByteKey(Array("kid-\(n + 2)".utf8))) }
        carried.keep(cache, committedTransaction: 8)
        #expect(carried.take(forTransaction: 9) !== cache, "a cache over the limit is not kept between writes")

        cache.subjectsSeen.removeAll(keepingCapacity: true)
        carried.keep(cache, committedTransaction: 8)
        #expect(carried.take(forTransaction: 9) !== cache, "nor one emptied that keeps the room it grew to")
    }

    @Test func eachWayOfWritingCarriesItsCacheToTheNextWrite() async throws {
        try await withLedger { ledger in
            try ledger.appendSynchronously([Events.asked(1)])
            var cache = ledger.writerCache.take(forTransaction: try Self.nextTransaction(ledger))
            #expect(cache.definitions[Events.uuid(1)]?.row.state == .pending)
            #expect(cache.subjectsSeen.contains(ByteKey(Array("kid-1".utf8))))

            // The writer thread's groups carry theirs too, from one group to the next.
            try await ledger.append(Events.asked(2))
            try await ledger.append(Events.answered(2))
            cache = ledger.writerCache.take(forTransaction: try Self.nextTransaction(ledger))
            #expect(cache.definitions[Events.uuid(2)] == nil, "an answered question leaves the cache")
            #expect(cache.handleSubjectsStored.count == 1)
        }
    }

    /// The keys a write found and the last chunk of handle values it wrote go to the next write, which seals with
    /// them: what every write added reads back, and after an erasure in between, what it kept and what came after.
    @Test func keysAndHandleValuesCarriedFromWriteToWriteSealWhatReadsBack() async throws {
        let base = Timestamp(microseconds: 1_795_000_000_000_000)
        func observed(_ batch: Int) -> PermissionEvent {
            let handles = (0..<30).map { try! CommunicationHandle(value: "h-\(batch)-\($0)", kind: .custom) }
            let at = base.adding(seconds: Int64(60 * batch))
            return PermissionEvent(id: "obs-\(batch)", subject: "kid-1", occurredAt: at, recordedAt: at,
                                   payload: .handlesObserved(checked: handles, known: handles))
        }
        try await withLedger(mapSize: 8 << 20) { ledger in
            // Five writes of 30 new handles each: the values fill two chunks of 64 and part of a third.
            for batch in 0..<5 { try ledger.appendSynchronously([observed(batch)]) }
            // The erasure cuts between the third write and the fourth; two more writes follow it.
            let cut = base.adding(seconds: 180), now = base.adding(seconds: 270)
            try ledger.appendSynchronously([PermissionEvent(
                id: "erase", subject: "kid-1", occurredAt: now, recordedAt: now,
                payload: .subjectErased(Erasure(basis: .guardianRequest, before: cut)))])
            for batch in 5..<7 { try ledger.appendSynchronously([observed(batch)]) }

            let handles = try await ledger.subject("kid-1").knownHandles()
            #expect(handles.count == 7 * 30)
            // The handles of the first three writes are erased; every other one reads its value.
            let readable = handles.compactMap { if case .readable(let value) = $0.value { value } else { nil } }
            #expect(Set(readable) == Set((3..<7).flatMap { batch in (0..<30).map { "h-\(batch)-\($0)" } }))
            // Read from the directory itself, not from the events that named them, which a reader falls back on.
            let directory = try ledger.environment.read { try HandleDirectory.values(of: "kid-1", $0, ledger.tables) }
            #expect(Set(try #require(directory).handles.map(\.value)) == Set(readable))
            #expect(try await ledger.verify().isIntact)
            let cache = ledger.writerCache.take(forTransaction: try Self.nextTransaction(ledger))
            #expect(cache.lastChunks.count == 1 && cache.tokenHashers.count == 1 && cache.eventKeys.count == 1)
        }
    }

    /// A subject's last chunk of handle values, opened and left unchanged (its handles seen again), is kept for its
    /// next event, within the store's cache limit: a long streamed append over many subjects holds a bounded number.
    @Test func theLastChunksKeptStayWithinTheCacheLimit() async throws {
        let at = Timestamp(microseconds: 1_795_000_000_000_000)
        func observed(_ n: Int, _ id: String) -> PermissionEvent {
            let handle = try! CommunicationHandle(value: "h-\(n)", kind: .custom)
            return PermissionEvent(id: id, subject: "kid-\(n)", occurredAt: at, recordedAt: at,
                                   payload: .handlesObserved(checked: [handle], known: [handle]))
        }
        try await withLedger(mapSize: 8 << 20) { ledger in
            try ledger.appendSynchronously((0..<6).map { observed($0, "first-\($0)") })
            let (kept, taken) = try ledger.writerCache.write(ledger.environment) { txn, _ in
                let cache = WriterCache()
                let store = LMDBStore(txn: txn, tables: ledger.tables, cacheLimit: 2, cache: cache)
                let request = GroupCommitter.Request(events: (0..<6).map { observed($0, "again-\($0)") }, maxRejections: 1) { _ in }
                _ = try GroupCommitter.apply(request, store: store, head: try Ledger.head(txn.reader, ledger.tables), clock: { at })
                try ledger.tables.keyRing?.syncNewKeys()
                let kept = cache.lastChunks.count
                cache.removeAll()
                return (kept, cache.lastChunks.count + cache.tokenHashers.count + cache.eventKeys.count)
            }
            #expect(kept >= 1 && kept <= 2)
            #expect(taken == 0, "emptied with the other caches: what a nested transaction wrote is not in them")
        }
    }

    /// The tokens of a subject's handles are made once and kept for its next events, up to the cache's limit, all
    /// forgotten when it is reached: a long streamed append over many handles holds a bounded number.
    @Test func theTokensKeptAreEachHandlesAndStayWithinTheirLimit() async throws {
        let at = Timestamp(microseconds: 1_795_000_000_000_000)
        func handle(_ n: Int) -> CommunicationHandle { try! CommunicationHandle(value: "h-\(n)", kind: .custom) }
        func observed(_ handles: [Int], _ id: String) -> PermissionEvent {
            PermissionEvent(id: id, subject: "kid-1", occurredAt: at, recordedAt: at,
                            payload: .handlesObserved(checked: handles.map(handle), known: handles.map(handle)))
        }
        try await withLedger(mapSize: 8 << 20) { ledger in
            try ledger.writerCache.write(ledger.environment) { txn, _ in
                func apply(_ events: [PermissionEvent], _ cache: WriterCache) throws {
                    let store = LMDBStore(txn: txn, tables: ledger.tables, cache: cache)
                    let request = GroupCommitter.Request(events: events, maxRejections: 1) { _ in }
                    _ = try GroupCommitter.apply(request, store: store, head: try Ledger.head(txn.reader, ledger.tables), clock: { at })
                }
                let kept = WriterCache()
                try apply([observed([0, 1, 2], "first"), observed([1, 2, 3], "second")], kept)
                let tokens = try #require(kept.tokenHashers[ByteKey(Array("kid-1".utf8))])
                #expect(kept.tokensMade == 4 && tokens.made.count == 4, "a handle seen again is not hashed again")
                for n in 0..<4 {
                    #expect(tokens.made[handle(n)]?.bytes == tokens.hasher.token(handle(n)))
                    #expect(tokens.made[handle(n)]?.handle == tokens.hasher.tokenHandle(handle(n)))
                }

                let bounded = WriterCache(tokenLimit: 4)
                try apply((0..<5).map { observed([10 + 3 * $0, 11 + 3 * $0, 12 + 3 * $0], "more-\($0)") }, bounded)
                let made = bounded.tokenHashers.values.map(\.made.count).reduce(0, +)
                #expect(bounded.tokensMade == made && made >= 1 && made <= 4, "\(made) tokens kept, at most 4")
                try ledger.tables.keyRing?.syncNewKeys()
            }
        }
    }

    /// A child's handle erased in one write and named again in a later one that starts from the same cache: the
    /// token kept from before was made under the erased lookup key, and the handle must be found under the new one.
    /// (A ledger's own writes drop the carried cache after an erasure, whose keys' overwriting is a transaction of its
    /// own; the cache is handed on here by hand, as a carried cache would be.)
    @Test func aHandleNamedAgainAfterAnErasureIsFoundUnderTheNewKey() async throws {
        let base = Timestamp(microseconds: 1_795_000_000_000_000)
        let handle = try CommunicationHandle(value: "+15550001111", kind: .phoneNumber)
        func observed(_ id: String, at: Timestamp) -> PermissionEvent {
            PermissionEvent(id: id, subject: "kid-1", occurredAt: at, recordedAt: at,
                            payload: .handlesObserved(checked: [handle], known: [handle]))
        }
        let erasedAt = base.adding(seconds: 60)
        let erasure = PermissionEvent(
            id: "erase", subject: "kid-1", occurredAt: erasedAt, recordedAt: erasedAt,
            payload: .subjectErased(Erasure(basis: .guardianRequest)))
        try await withLedger { ledger in
            let cache = WriterCache()
            for event in [observed("before", at: base), erasure, observed("after", at: base.adding(seconds: 120))] {
                try ledger.writerCache.write(ledger.environment) { txn, _ in
                    let store = LMDBStore(txn: txn, tables: ledger.tables, cache: cache)
                    let request = GroupCommitter.Request(events: [event], maxRejections: 1) { _ in }
                    _ = try GroupCommitter.apply(request, store: store, head: try Ledger.head(txn.reader, ledger.tables), clock: { event.recordedAt! })
                    try ledger.tables.keyRing?.syncNewKeys()
                }
                try ledger.tables.keyRing?.completeDestruction(ledger.environment, ledger.tables)
            }
            #expect(try ledger.head().seq == 3)
            #expect(try ledger.read { try $0.isKnownHandle(handle, subject: "kid-1") })
            let values = try await ledger.subject("kid-1").knownHandles().map(\.value)
            #expect(values.count == 2 && values.contains(.readable(handle.value)), "\(values)")
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// Writes that do not commit (a dry run, a rejected batch) must leave nothing they learned behind.
    @Test func writesThatDoNotCommitLeaveNothingBehind() async throws {
        try await withLedger { ledger in
            try ledger.appendSynchronously([Events.asked(9)])
            _ = try ledger.validate([Events.asked(1)])
            #expect(throws: AppendRejected.self) { try ledger.appendSynchronously([Events.answered(1)]) }

            #expect(throws: AppendRejected.self) { try ledger.appendSynchronously([Events.asked(2), Events.answered(2, choice: "nope")]) }
            await #expect(throws: AppendRejected.self) { try await ledger.append(Events.answered(2)) }
            await #expect(throws: AppendRejected.self) { try await ledger.append([Events.asked(3), Events.answered(3, choice: "nope")]) }
            #expect(throws: AppendRejected.self) { try ledger.appendSynchronously([Events.answered(3)]) }

            try await ledger.append(Events.answered(9))
            #expect(try ledger.head().seq == 2)
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// In one shared transaction, a request committed in a nested transaction changes what the shared cache
    /// describes: the requests after it must see its writes, not what the cache held before.
    @Test func aRequestAfterANestedOneInTheSameGroupSeesItsWrites() async throws {
        try await withLedger { ledger in
            let hold = Events.WriterHold(ledger)
            let first = Task { try await ledger.append(Events.asked(1)) }
            try await Events.waitForQueue(ledger, waiting: 0, committing: 1)
            let conflicting = PermissionEvent(
                id: "answer-5-again", subject: "kid-1", occurredAt: Events.base.adding(seconds: 120),
                payload: .questionAnswered(questionID: Events.uuid(5), choiceID: "decline", via: .messages))
            // Queued in order: question 5 asked in the shared transaction (its cache then holds it pending),
            // answered by a batch (two events: a nested transaction), then answered differently.
            let requests = [[Events.asked(5)], [Events.answered(5), Events.asked(6)], [conflicting]]
            var tasks: [Task<Result<Ledger.AppendSummary, any Error>, Never>] = []
            for (index, events) in requests.enumerated() {
                tasks.append(Task {
                    do { return .success(try await ledger.append(events)) } catch { return .failure(error) }
                })
                try await Events.waitForQueue(ledger, waiting: index + 1, committing: 1)
            }
            hold.release()
            _ = try await first.value
            var results: [Result<Ledger.AppendSummary, any Error>] = []
            for task in tasks { results.append(await task.value) }
            guard case .failure(let error) = results[2], let rejected = error as? AppendRejected else {
                Issue.record("the conflicting answer was accepted: \(results[2])")
                return
            }
            #expect(rejected.description.contains("already answered"), "\(rejected)")
            #expect(try ledger.head().seq == 4)
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// A write that fills the map runs again from scratch in a larger one: the second run must not start
    /// from what the first learned (its questions would look asked already).
    @Test func aWriteRunAgainAfterTheMapGrewStartsFromAnEmptyCache() async throws {
        try await withLedger(mapSize: 1 << 20) { ledger in
            try ledger.appendSynchronously([Events.asked(100_000)])
            let batch = (0..<3_000).map { Events.asked($0, subject: "kid-\($0 % 50)") }
            let summary = try ledger.appendSynchronously(batch)
            #expect(summary.appended == batch.count)

            let grouped = (3_000..<6_000).map { Events.asked($0, subject: "kid-\($0 % 50)") }
            try await ledger.append(grouped)
            #expect(try ledger.head().seq == 6_001)
            #expect(try await ledger.verify().isIntact)
        }
    }
}
