import Crypto
import Foundation
import LMDB
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// A write that does not commit destroys the data keys it added (``KeyRing/destroyUncommitted(after:)``): what it
/// sealed under them was never stored, and no key outlives the write that made it.
@Suite struct UncommittedKeysTests {
    typealias G = GroupCommitTests

    /// The slots of the key store that the ledger's `keys` table names.
    static func namedSlots(_ ledger: Ledger) throws -> Set<UInt64> {
        let ring = try #require(ledger.tables.keyRing)
        return try ledger.environment.read { txn in try KeyRing.namedSlots(txn, ledger.tables, in: 0..<ring.store.slotCount) }
    }

    /// The count of slots the ledger accounts for (`keySlots`).
    static func accountedSlots(_ ledger: Ledger) throws -> UInt64? {
        try ledger.environment.read { txn in try txn.get(ledger.tables.meta, key: KeyRing.slotCountEntry).map { Keys.decodeSeq($0) } }
    }

    /// Every slot of the key store is named by the `keys` table or destroyed; every slot named holds its key.
    static func expectEverySlotNamedOrDestroyed(_ ledger: Ledger, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ring = try #require(ledger.tables.keyRing)
        let named = try namedSlots(ledger)
        for slot in 0..<ring.store.slotCount {
            let held = try ring.store.key(slot: slot) != nil
            #expect(held == named.contains(slot), "slot \(slot): named \(named.contains(slot)), holds a key \(held)", sourceLocation: sourceLocation)
        }
    }

    /// Questions to subjects the ledger has not seen: each makes a subject's keys.
    static func askedOfNewSubjects(_ numbers: Range<Int>) -> [PermissionEvent] {
        numbers.map { G.asked($0, subject: "kid-\($0)") }
    }

    /// The question that ``GroupCommitTests/asked(_:subject:)`` asks.
    static func question(_ number: Int) throws -> PermissionQuestion {
        guard case .questionAsked(let question) = G.asked(number).payload else { throw EventRejection("not a question") }
        return question
    }

    @Test func aRejectedBatchAndADryRunDestroyTheKeysTheyAdded() async throws {
        try await withLedger { ledger in
            try ledger.appendSynchronously([G.asked(1)])
            let ring = try #require(ledger.tables.keyRing)
            let before = ring.store.slotCount
            #expect(throws: AppendRejected.self) {
                try ledger.appendSynchronously(Self.askedOfNewSubjects(2..<4) + [G.answered(3, choice: "nope", subject: "kid-3")])
            }
            #expect(ring.store.slotCount > before, "the rejected batch added keys")
            for slot in before..<ring.store.slotCount { #expect(try ring.store.key(slot: slot) == nil, "slot \(slot)") }
            let dryRunFrom = ring.store.slotCount
            #expect(try ledger.validate(Self.askedOfNewSubjects(4..<6)).head.seq == 3)
            #expect(ring.store.slotCount > dryRunFrom, "the dry run added keys")
            try Self.expectEverySlotNamedOrDestroyed(ledger)
            // The same events, accepted, make keys of their own and read back.
            try ledger.appendSynchronously(Self.askedOfNewSubjects(2..<4))
            try Self.expectEverySlotNamedOrDestroyed(ledger)
            #expect(try await ledger.question(G.uuid(3))?.question == Self.question(3))
        }
    }

    /// In a group, a request rejected in its nested transaction destroys its keys; the keys of the requests
    /// committed beside it stay.
    @Test func aRequestRejectedInItsNestedTransactionDestroysOnlyItsKeys() async throws {
        try await withLedger { ledger in
            let hold = G.WriterHold(ledger)
            // The writer takes a first request and waits for the hold; the three after it are one group.
            let first = Task { try await ledger.append(G.asked(1)) }
            try await G.waitForQueue(ledger, waiting: 0, committing: 1)
            let requests = [Self.askedOfNewSubjects(2..<3), Self.askedOfNewSubjects(3..<5) + [G.answered(4, choice: "nope", subject: "kid-4")],
                            Self.askedOfNewSubjects(5..<7)]
            var tasks: [Task<Bool, Never>] = []
            for (index, events) in requests.enumerated() {
                tasks.append(Task { (try? await ledger.append(events)) != nil })
                try await G.waitForQueue(ledger, waiting: index + 1, committing: 1)
            }
            hold.release()
            _ = try await first.value
            var committed: [Bool] = []
            for task in tasks { committed.append(await task.value) }
            #expect(committed == [true, false, true])
            try Self.expectEverySlotNamedOrDestroyed(ledger)
            for number in [2, 5, 6] { #expect(try await ledger.question(G.uuid(number))?.question == Self.question(number)) }
            #expect(try await ledger.question(G.uuid(3)) == nil)
        }
    }

    /// Writes of two threads at once, one rejected again and again: every key a commit names still opens, and
    /// every other is destroyed.
    @Test func aRejectedWriteNeverDestroysTheKeysOfAnotherThreadsWrite() async throws {
        try await withLedger(mapSize: 16 << 20) { ledger in
            let rejecting = Task.detached {
                for number in 1_000..<1_200 {
                    _ = try? ledger.appendSynchronously(Self.askedOfNewSubjects(number..<(number + 1))
                        + [G.answered(number, choice: "nope", subject: "kid-\(number)")])
                }
            }
            // Appends of every subject at once, so that the writer thread commits while the other thread is rejected.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<60 { group.addTask { try await ledger.append(Self.askedOfNewSubjects(number..<(number + 1))) } }
                try await group.waitForAll()
            }
            await rejecting.value
            try Self.expectEverySlotNamedOrDestroyed(ledger)
            for number in 0..<60 { #expect(try await ledger.question(G.uuid(number))?.question == Self.question(number)) }
        }
    }

    /// Slots that a write added and no commit names (its process killed before it destroyed them, or its commit
    /// failed after they were flushed) are destroyed by the next writable open, and left by a read-only one.
    @Test func slotsNoCommitNamesAreDestroyedByTheNextWritableOpen() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let options = Ledger.Options(durable: false)
            let ledger = try Ledger(path: path, options: options)
            try ledger.appendSynchronously(Self.askedOfNewSubjects(0..<2))
            let store = try #require(ledger.tables.keyRing).store
            // What a write killed after it flushed its keys leaves: slots past the count its last commit recorded.
            let abandoned = try (0..<3).map { _ in try store.add(SymmetricKey(size: .bits256), secrets: options.secrets) }
            try store.sync()
            await ledger.close()

            var readOnly = options
            readOnly.readOnly = true
            let reader = try Ledger(path: path, options: readOnly)
            for slot in abandoned { #expect(try reader.tables.keyRing?.store.key(slot: slot) != nil, "a read-only open wrote slot \(slot)") }
            await reader.close()

            let writer = try Ledger(path: path, options: options)
            for slot in abandoned { #expect(try writer.tables.keyRing?.store.key(slot: slot) == nil, "slot \(slot) holds its key") }
            try Self.expectEverySlotNamedOrDestroyed(writer)
            #expect(try await writer.question(G.uuid(1))?.question == Self.question(1))
            // New keys take slots after the destroyed ones.
            try writer.appendSynchronously(Self.askedOfNewSubjects(2..<3))
            #expect(try #require(writer.tables.keyRing).store.slotCount > abandoned.last! + 1)
            try Self.expectEverySlotNamedOrDestroyed(writer)
            #expect(try await writer.question(G.uuid(2))?.question == Self.question(2))
            await writer.close()
        }
    }

    /// A new ledger whose first write to add keys was killed records no count yet: every slot it holds is past the
    /// count, and destroyed by the next writable open or write like any other.
    @Test(arguments: ["writable open", "write"]) func slotsOfANewLedgersFirstWriteKilledAreDestroyed(_ next: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let options = Ledger.Options(durable: false)
            var ledger = try Ledger(path: path, options: options)
            let store = try #require(ledger.tables.keyRing).store
            let abandoned = try (0..<3).map { _ in try store.add(SymmetricKey(size: .bits256), secrets: options.secrets) }
            try store.sync()
            #expect(try Self.accountedSlots(ledger) == nil)
            if next == "writable open" {
                await ledger.close()
                ledger = try Ledger(path: path, options: options)
                #expect(try ledger.keysNamedByNothing() == 0)
            }
            try ledger.appendSynchronously(Self.askedOfNewSubjects(0..<2))
            let ring = try #require(ledger.tables.keyRing)
            for slot in abandoned { #expect(try ring.store.key(slot: slot) == nil, "slot \(slot) holds its key") }
            try Self.expectEverySlotNamedOrDestroyed(ledger)
            #expect(try ledger.keysNamedByNothing() == 0)
            #expect(try Self.accountedSlots(ledger) == ring.store.slotCount)
            #expect(try await ledger.question(G.uuid(1))?.question == Self.question(1))
            await ledger.close()
        }
    }

    /// Slots left past the count while the ledger stays open (another process's write killed, a commit that
    /// failed) are destroyed by the next write, before it adds keys of its own after them.
    @Test func slotsNoCommitNamesAreDestroyedByTheNextWrite() async throws {
        try await withLedger { ledger in
            try ledger.appendSynchronously(Self.askedOfNewSubjects(0..<2))
            let store = try #require(ledger.tables.keyRing).store
            let abandoned = try (0..<3).map { _ in try store.add(SymmetricKey(size: .bits256), secrets: ledger.options.secrets) }
            try store.sync()
            try ledger.appendSynchronously(Self.askedOfNewSubjects(2..<3))
            for slot in abandoned { #expect(try store.key(slot: slot) == nil, "slot \(slot) holds its key") }
            try Self.expectEverySlotNamedOrDestroyed(ledger)
            #expect(try Self.accountedSlots(ledger) == store.slotCount)
            #expect(try ledger.keysNamedByNothing() == 0)
            #expect(try await ledger.question(G.uuid(2))?.question == Self.question(2))
        }
    }

    /// A slot past the count that a `keys` entry names all the same (as a build from before the count was kept
    /// would have written it) keeps its key; the count moves past it.
    @Test func aSlotPastTheCountThatAnEntryNamesIsKept() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .init(durable: false))
            try ledger.appendSynchronously(Self.askedOfNewSubjects(0..<1))
            let store = try #require(ledger.tables.keyRing).store
            let slot = try store.add(SymmetricKey(size: .bits256), secrets: ledger.options.secrets)
            try store.sync()
            let keys = try #require(ledger.tables.keys)
            try ledger.environment.write { txn in
                try txn.put(keys, key: Keys.versioned(KeyRing.entry(subject: "kid-old", .lookup), 1), value: Keys.seq(slot))
            }
            await ledger.close()
            let writer = try Ledger(path: path, options: .init(durable: false))
            #expect(try writer.tables.keyRing?.store.key(slot: slot) != nil, "a named slot was destroyed")
            #expect(try Self.accountedSlots(writer) == slot + 1)
            await writer.close()
        }
    }

    /// A key store planted with a size of terabytes past the count (sparse) is damage, not read to its end.
    @Test func aKeyStoreFarLongerThanTheCountIsDamage() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .init(durable: false))
            try ledger.appendSynchronously(Self.askedOfNewSubjects(0..<1))
            let slots = try #require(ledger.tables.keyRing).store.slotCount
            await ledger.close()
            #expect(truncate(path + "/" + KeyStore.fileName, off_t(KeyStore.headerSize) + off_t(slots + (1 << 34)) * off_t(KeyStore.slotSize)) == 0)
            let error = try #require(throws: LedgerError.self) { try Ledger(path: path, options: .init(durable: false)) }
            #expect(error.kind == .damaged && error.message.contains("keys past the"), "\(error)")
            var readOnly = Ledger.Options(durable: false)
            readOnly.readOnly = true
            let reader = try Ledger(path: path, options: readOnly)
            #expect(try await reader.question(G.uuid(0))?.question == Self.question(0))
            await reader.close()
        }
    }

    /// A map that fills is grown and the write run again: the keys of the run that did not commit are destroyed.
    @Test func aWriteRunAgainAfterItsMapGrewDestroysTheKeysOfTheFirstRun() async throws {
        try await withLedger(mapSize: 256 << 10) { ledger in
            let mapSize = ledger.environment.mapSize
            try ledger.appendSynchronously(Self.askedOfNewSubjects(0..<400))
            #expect(ledger.environment.mapSize > mapSize, "the map grew")
            let ring = try #require(ledger.tables.keyRing)
            #expect(ring.store.slotCount > UInt64(try Self.namedSlots(ledger).count), "the first run added keys")
            try Self.expectEverySlotNamedOrDestroyed(ledger)
        }
    }
}
