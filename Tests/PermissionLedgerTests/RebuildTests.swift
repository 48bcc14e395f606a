import Foundation
import LMDB
@_spi(Testing) @_spi(StorageEngine) import PermissionLedger
@testable import PermissionLedger
import PermissionModel
import Testing

/// `rebuildProjections()` writes exactly what appends wrote, and refuses a log whose rules no longer hold.
@Suite struct RebuildTests {
    /// Every named table as key/value digests (rows and SHA-256), read with plain cursor scans.
    static func digests(_ path: String) throws -> [String] {
        try Ledger.tableDigests(path: path).map { "\($0.table) \($0.rows) \($0.digest)" }
    }

    @Test("a rebuild writes every derived table byte for byte as the appends did", arguments: Fixtures.valid)
    func rebuiltTablesEqualAppendedOnes(name: String) async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path, options: .init(mapSize: 1 << 20, durable: false))
                try await ledger.importFixture(name)
            }
            let appended = try Self.digests(path)
            do {
                // A map of 1 MiB is too small for the log and a second copy of its tables: the rebuild makes room.
                let ledger = try Ledger(path: path, options: .init(mapSize: 1 << 20, durable: false))
                try ledger.rebuildProjections()
            }
            #expect(try Self.digests(path) == appended)
        }
    }

    /// A rebuild holds `subjectEvents` rows back and writes them in key order: in one go before it commits,
    /// or in several when it holds more than its limit. Either way every table equals what the appends wrote.
    @Test("a rebuild that writes subjectEvents in several goes writes every table as the appends did", arguments: Fixtures.valid)
    func rebuildWritingSubjectEventsInSeveralGoes(name: String) async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.importFixture(name)
            }
            let appended = try Self.digests(path)
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try Ledger.rebuildProjections(environment: ledger.environment, tables: ledger.tables, path: path, pendingSubjectEventLimit: 3)
            }
            #expect(try Self.digests(path) == appended)
        }
    }

    /// The write caches (question definitions, known subjects, checkpoint counts, stored `handleSubjects` keys)
    /// only save lookups: emptied at every entry, they must leave every table as it is with the usual limit.
    @Test("write caches emptied at every entry change no row", arguments: Fixtures.valid)
    func tinyWriteCachesWriteTheSameTables(name: String) async throws {
        try await withTemporaryDirectory { directory async throws in
            let imported = directory + "/imported", tiny = directory + "/tiny"
            var events: [PermissionEvent] = []
            do {
                let ledger = try Ledger(path: imported, options: .init(durable: false))
                try await ledger.importFixture(name)
                try ledger.forEachEvent { events.append($0) }
            }
            do {
                let ledger = try Ledger(path: tiny, options: .init(durable: false))
                try ledger.environment.write { txn in
                    var remaining = events.makeIterator()
                    let store = LMDBStore(txn: txn, tables: ledger.tables, cacheLimit: 1)
                    let head = try GroupCommitter.apply(
                        { remaining.next() }, store: store, head: .empty, clock: { .earliest }, maxRejections: 1, outcome: { _ in })
                    #expect(head.seq == UInt64(events.count))
                }
            }
            #expect(try Self.digests(tiny) == Self.digests(imported))
        }
    }

    /// A ledger whose log ends with `repeated(first event, last event)` appended raw, chained on properly.
    static func withDamagedLog(
        _ repeated: (PermissionEvent, PermissionEvent) -> PermissionEvent, _ body: (String, LogHead) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            var head = LogHead.empty
            var events: [PermissionEvent] = []
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.importFixture("late-answer.jsonl")
                head = try ledger.head()
                try ledger.forEachEvent { events.append($0) }
            }
            var again = repeated(events[0], events[events.count - 1])
            (again.seq, again.hash) = (nil, nil)
            let record = EventRecord.encode(again, recordedAt: try #require(head.recordedAt))
            let hash = chainHash(previous: head.hash, record: record)
            do {
                let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
                let events = try environment.openDatabase("events", create: false)
                try environment.write { txn in try txn.put(events, key: Keys.seq(head.seq + 1), value: hash.bytes + record) }
            }
            try await body(path, head)
        }
    }

    /// Rebuilds the ledger at `path`, expecting damage at `seq`, and that nothing changed.
    static func expectDamage(_ path: String, seq: UInt64, mentioning words: String) throws {
        let before = try digests(path)
        do {
            let ledger = try Ledger(path: path, options: .init(durable: false))
            let error = try #require(throws: LedgerError.self) { try ledger.rebuildProjections() }
            #expect(error.kind == .damaged, "\(error.message)")
            #expect(error.seq == seq, "\(error.message)")
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(try digests(path) == before, "the failed rebuild is rolled back whole")
    }

    @Test("a rebuild of a log holding an event id twice fails as damage at that event and changes nothing")
    func aRepeatedEventIDIsDamage() async throws {
        // A permission change passes every rule again: only its id gives it away.
        try await Self.withDamagedLog({ first, last in
            PermissionEvent(id: first.id, subject: last.subject, occurredAt: last.occurredAt, payload: .permissionChanged(.camera, state: .denied, cause: nil))
        }) { path, head in
            try Self.expectDamage(path, seq: head.seq + 1, mentioning: "already used by an earlier event")
        }
    }

    @Test("a rebuild of a log whose event breaks a rule fails as damage at that event and changes nothing")
    func aBrokenRuleIsDamage() async throws {
        // The first question asked again, under an id of its own.
        try await Self.withDamagedLog({ first, _ in
            var event = first
            event.id = "asked-again"
            return event
        }) { path, head in
            try Self.expectDamage(path, seq: head.seq + 1, mentioning: "breaks a rule of the log")
        }
    }
}
