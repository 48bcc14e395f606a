import Foundation
import LMDB
@_spi(StorageEngine) import PermissionLedger
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
                try await ledger.rebuildProjections()
            }
            #expect(try Self.digests(path) == appended)

            // As `permission-ledger rebuild` does it: opened for the rebuild alone, with the map writable.
            let head = try Ledger(path: path, options: .init(readOnly: true)).head()
            #expect(try await Ledger.rebuildProjections(path: path) == head)
            #expect(try Self.digests(path) == appended)
            #expect(try await Ledger(path: path, options: .init(readOnly: true)).verify().isIntact)
        }
    }

    @Test("a rebuild with the map writable refuses a ledger open in this process, and changes nothing")
    func rebuildByPathOfAnOpenLedger() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .init(durable: false))
            try await ledger.importFixture("family-day.jsonl")
            let before = try ledger.head()
            let error = try #require(throws: LedgerError.self) { try Ledger.rebuildProjections(path: path) }
            #expect(error.kind == .locked, "\(error.message)")
            #expect(try ledger.head() == before)
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// What a rebuild holds in memory only saves work: `subjectEvents` and `expiries` rows held back and
    /// written in key order, the write caches. Given up early (a limit of 1 takes every fallback at every event), every
    /// table still equals what the appends wrote.
    static let smallLimits: [(String, Ledger.RebuildTuning)] = [
        ("subjectEvents and expiries written every 3 rows", .init(heldRowLimit: 3)),
        ("caches of one entry", .init(cacheLimit: 1)),
        ("both, read on the rebuilding thread", .init(readAheadBatchSize: nil, heldRowLimit: 1, cacheLimit: 1)),
    ]

    @Test("a rebuild that gives up what it holds in memory early writes every table as the appends did", arguments: Fixtures.valid)
    func rebuildWithSmallLimits(name: String) async throws {
        try await Self.expectRebuildsWriteTheAppendedTables(name, Self.smallLimits)
    }

    /// A rebuild reads the log ahead on a thread of its own, or on its own thread on a machine with one core.
    /// Whichever way, and however small the batches handed over, every table equals what the appends wrote.
    @Test("a rebuild reading the log ahead in batches of any size, or not at all, writes every table as the appends did",
          arguments: Fixtures.valid)
    func rebuildReadingAheadOrNot(name: String) async throws {
        try await Self.expectRebuildsWriteTheAppendedTables(name, (Self.readAheadBatchSizes + [2, 3]).map { batchSize in
            ("read-ahead batches of \(batchSize.map(String.init) ?? "none")", Ledger.RebuildTuning(readAheadBatchSize: batchSize))
        })
    }

    /// Imports the fixture `name` into a new ledger at `path` (not durable: nothing here needs a flush), and
    /// closes it.
    static func importFixture(_ name: String, at path: String) async throws {
        let ledger = try Ledger(path: path, options: .init(durable: false))
        try await ledger.importFixture(name)
    }

    /// Imports the fixture `name`, then rebuilds its ledger with each tuning in turn, expecting every table
    /// to equal what the appends wrote after each.
    static func expectRebuildsWriteTheAppendedTables(_ name: String, _ tunings: [(String, Ledger.RebuildTuning)]) async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            try await Self.importFixture(name, at: path)
            let appended = try Self.digests(path)
            for (what, tuning) in tunings {
                do {
                    let ledger = try Ledger(path: path, options: .init(durable: false))
                    try Ledger.rebuildProjections(environment: ledger.environment, tables: ledger.tables, path: path, tuning: tuning)
                }
                #expect(try Self.digests(path) == appended, "\(what)")
            }
        }
    }

    /// The write caches (question definitions, known subjects, stored `handleSubjects` keys)
    /// only save lookups: emptied at every entry, they must leave every table as it is with the usual limit.
    @Test("write caches emptied at every entry change no row", arguments: Fixtures.valid)
    func tinyWriteCachesWriteTheSameTables(name: String) async throws {
        try await withTemporaryDirectory { directory async throws in
            let imported = directory + "/imported", usual = directory + "/usual", tiny = directory + "/tiny"
            var events: [PermissionEvent] = []
            do {
                let ledger = try Ledger(path: imported, options: .seeded(durable: false))
                try await ledger.importFixture(name)
                events += try storedEvents(ledger).map(\.event)
            }
            // The events as stored, erased ones in their erased form, written through the rules with the usual
            // cache limit and with a limit of 1.
            for (path, limit) in [(usual, nil), (tiny, 1)] as [(String, Int?)] {
                let ledger = try Ledger(path: path, options: .seeded(durable: false))
                try ledger.environment.write { txn in
                    var remaining = events.makeIterator()
                    let store = limit.map { LMDBStore(txn: txn, tables: ledger.tables, cacheLimit: $0) } ?? LMDBStore(txn: txn, tables: ledger.tables)
                    let head = try GroupCommitter.apply(
                        { remaining.next() }, store: store, head: .empty, clock: { .earliest }, maxRejections: 1, outcome: { _ in })
                    #expect(head.seq == UInt64(events.count))
                    try ledger.tables.keyRing?.syncNewKeys()
                }
            }
            // Without an erasure, that is what the import wrote.
            if !events.contains(where: { $0.type == .subjectErased }) {
                #expect(try Self.digests(usual) == Self.digests(imported))
            }
            #expect(try Self.digests(tiny) == Self.digests(usual))
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
                events += try storedEvents(ledger).map(\.event)
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

    /// The ways a rebuild reads the log: on its own thread, and ahead on another one in batches of one event
    /// (a handoff at every event) or of the usual size.
    static let readAheadBatchSizes: [Int?] = [nil, 1, 256]

    /// Rebuilds the ledger at `path`, expecting damage at `seq`, and that nothing changed: with the public
    /// call, then reading the log in each of the ways there are, and with every small limit.
    static func expectDamage(_ path: String, seq: UInt64, mentioning words: String) throws {
        let before = try digests(path)
        var errors: [LedgerError] = []
        do {
            let ledger = try Ledger(path: path, options: .init(durable: false))
            errors.append(try #require(throws: LedgerError.self) { try ledger.rebuildProjections() })
            let tunings = readAheadBatchSizes.map { Ledger.RebuildTuning(readAheadBatchSize: $0) } + smallLimits.map(\.1)
            for tuning in tunings {
                errors.append(try #require(throws: LedgerError.self) {
                    try Ledger.rebuildProjections(environment: ledger.environment, tables: ledger.tables, path: path, tuning: tuning)
                })
            }
        }
        errors.append(try #require(throws: LedgerError.self) { try Ledger.rebuildProjections(path: path) })
        for error in errors {
            #expect(error.kind == .damaged, "\(error.message)")
            #expect(error.seq == seq, "\(error.message)")
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(try digests(path) == before, "the failed rebuilds are rolled back whole")
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

    /// Overwrites the stored record of `seq` with `record`, leaving its chain hash as it was.
    static func replaceRecord(_ path: String, seq: UInt64, _ change: (inout [UInt8]) -> Void) throws {
        let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
        let events = try environment.openDatabase("events", create: false)
        try environment.write { txn in
            var value = [UInt8](try #require(try txn.get(events, key: Keys.seq(seq))))
            var record = Array(value[32...])
            change(&record)
            value.replaceSubrange(32..., with: record)
            try txn.put(events, key: Keys.seq(seq), value: value)
        }
    }

    @Test("a rebuild of a log whose chain breaks fails as damage at that event, however the log is read, and changes nothing")
    func aBrokenChainIsDamage() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            try await Self.importFixture("late-answer.jsonl", at: path)
            // The last byte of the second event's record (its id's or payload's), changed: the record still
            // decodes, but no longer hashes to what is stored.
            try Self.replaceRecord(path, seq: 2) { $0[$0.count - 1] ^= 0x01 }
            try Self.expectDamage(path, seq: 2, mentioning: "chain hash does not match")
        }
    }

    /// An export hands on no event whose bytes the chain does not vouch for: a changed id still decodes, and the
    /// export stops at it as damage, from the start and from a later seq alike.
    @Test func anExportStopsAtAnEventWhoseChainHashDoesNotMatch() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            try await Self.importFixture("late-answer.jsonl", at: path)
            try Self.replaceRecord(path, seq: 2) { record in
                let id = Array("late-02".utf8)
                let at = try! #require(record.indices.first { record[$0...].starts(with: id) })
                record[at + id.count - 1] = UInt8(ascii: "9")
            }
            let ledger = try Ledger(path: path, options: .init(readOnly: true))
            for after: UInt64 in [0, 1] {
                var exported: [UInt64] = []
                let error = ledgerError { try ledger.forEachEvent(after: after) { exported.append($0.seq) } }
                #expect(error?.kind == .damaged && error?.seq == 2, "\(String(describing: error))")
                #expect(error?.message.contains("chain hash does not match") == true, "\(String(describing: error))")
                #expect(exported == (after == 0 ? [1] : []))
            }
            // From after the damaged event, the chain starts from its stored hash.
            let later = try { () throws -> [UInt64] in
                var seqs: [UInt64] = []
                try ledger.forEachEvent(after: 2) { seqs.append($0.seq) }
                return seqs
            }()
            #expect(later.first == 3)
        }
    }

    /// The reading thread lets go of the environment before the rebuild returns, also when the rebuild
    /// fails at once: a ledger released right after is closed, and can be opened again in this process.
    @Test("the reading thread has let go of the environment when a rebuild returns or fails")
    func theReadingThreadLetsGoOfTheEnvironment() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            try await Self.importFixture("late-answer.jsonl", at: path)
            for round in 0..<40 {
                if round == 20 { try Self.replaceRecord(path, seq: 1) { $0[$0.count - 1] ^= 0x01 } }
                do {
                    var environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
                    let tables = try Tables(environment: environment, create: false)
                    let tuning = Ledger.RebuildTuning(readAheadBatchSize: 1 + round % 3)
                    let rebuilt = (try? Ledger.rebuildProjections(environment: environment, tables: tables, path: path, tuning: tuning)) != nil
                    #expect(rebuilt == (round < 20))
                    #expect(isKnownUniquelyReferenced(&environment), "round \(round)")
                }
                // Closed when released: opened again at once.
                _ = try Environment(path: path, options: .init(maxDatabases: 32, readOnly: true))
            }
        }
    }

    /// The second thread needs a reader slot of its own (the rebuild's write transaction needs none). With
    /// every slot taken it reads nothing and says so, and the rebuild reads on its own thread instead.
    @Test("with no reader slot free the read-ahead reads nothing and says so; with one free it reads every event")
    func readAheadWithoutAFreeReaderSlot() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            var expected: [UInt64] = []
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.importFixture("late-answer.jsonl")
                expected = try storedEvents(ledger).map(\.seq)
            }
            // A lock file sized for one reader (no process has the ledger open).
            try FileManager.default.removeItem(atPath: path + "/lock.mdb")
            let environment = try Environment(path: path, options: .init(maxDatabases: 32, maxReaders: 1, durable: false))
            let tables = try Tables(environment: environment, create: false)
            let taken = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
            Thread {
                _ = try? environment.read { _ in
                    taken.signal()
                    release.wait()
                }
                released.signal()
            }.start()
            taken.wait()
            var seen: [UInt64] = []
            let readAhead = try LogReadAhead.forEach(environment, tables, batchSize: 2) { event, _, _ in seen.append(event.seq!) }
            release.signal()
            released.wait()
            #expect(!readAhead)
            #expect(seen.isEmpty)
            #expect(try LogReadAhead.forEach(environment, tables, batchSize: 2) { event, _, _ in seen.append(event.seq!) })
            #expect(seen == expected)
        }
    }

    /// Damage the reading thread finds after an event the rules turn away is reported after it: the first
    /// damage in log order is the one named, wherever it is found.
    @Test("a rule broken before a broken chain is the damage a rebuild reports")
    func theFirstDamageInLogOrderIsReported() async throws {
        try await Self.withDamagedLog({ first, _ in
            var event = first
            event.id = "asked-again"
            return event
        }) { path, head in
            // A second copy of the damaged event after it, its record then changed without its hash; then a third,
            // chained from the second, so that the head itself is sound (a writable open checks the head's chain).
            do {
                let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
                let events = try environment.openDatabase("events", create: false)
                try environment.write { txn in
                    let value = [UInt8](try #require(try txn.get(events, key: Keys.seq(head.seq + 1))))
                    try txn.put(events, key: Keys.seq(head.seq + 2), value: value)
                    let chained = chainHash(previous: ChainHash(unchecked: Array(value[0..<32])), record: Array(value[32...]))
                    try txn.put(events, key: Keys.seq(head.seq + 3), value: chained.bytes + value[32...])
                }
            }
            try Self.expectDamage(path, seq: head.seq + 1, mentioning: "breaks a rule of the log")
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
