import Foundation
import LMDB
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// docs/STORAGE.md, "Handle values": each subject's handle values, sealed in chunks, from which queries read them.
@Suite(.timeLimit(.minutes(10)))
struct HandleDirectoryTests {
    static func phone(_ n: Int) -> (String, String) { ("+1555\(String(format: "%07d", n))", "phoneNumber") }

    /// The keys of the `handleValues` entries of `subject`, by kind: chunks (1) and index entries (2).
    static func entries(_ ledger: Ledger, subject: String) throws -> (chunks: Int, index: Int) {
        let db = try #require(ledger.tables.handleValues)
        let prefix = Keys.subjectPrefix(subject)
        return try ledger.environment.read { txn in
            var counts = (chunks: 0, index: 0)
            let cursor = try txn.cursor(db)
            var entry = try cursor.seek(atOrAfter: prefix)
            while let e = entry, e.key.starts(with: prefix) {
                if e.key[prefix.count] == 1 { counts.chunks += 1 } else { counts.index += 1 }
                entry = try cursor.next()
            }
            return counts
        }
    }

    static func knownValues(_ ledger: Ledger, subject: String, asOf: AsOf? = nil) throws -> [String] {
        let point = try asOf ?? .seq(ledger.head().seq)
        return try ledger.read(asOf: point) { try $0.knownHandles(subject: subject) }.map { known in
            known.erased.map { "(erased, seq \($0.seq))" } ?? known.handle.value
        }
    }

    @Test func aSubjectWithMoreHandlesThanAChunkHoldsEachValueOnceAndListsThemAll() async throws {
        try await withLedger(mapSize: 8 << 20, seed: "directory") { ledger in
            // 150 handles in three observations, the second naming 20 of the first's again.
            let first = (0..<60).map(Self.phone), second = (40..<110).map(Self.phone), third = (110..<150).map(Self.phone)
            try await ledger.append(json:
                JSONLine.observed("o1", checked: first, known: first, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.observed("o2", checked: second, known: second, at: "09:01:00", recorded: "09:01:01"),
                JSONLine.observed("o3", checked: third, known: third, at: "09:02:00", recorded: "09:02:01"),
                JSONLine.observed("o4", subject: "kid-ben", checked: [Self.phone(7)], known: [Self.phone(7)], at: "09:03:00", recorded: "09:03:01"))
            let counts = try Self.entries(ledger, subject: "kid-ava")
            #expect(counts.chunks == 3)
            #expect(counts.index == 150)
            let expected = (0..<150).map { Self.phone($0).0 }
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == expected)
            #expect(try Self.knownValues(ledger, subject: "kid-ava", asOf: .seq(1)) == Array(expected.prefix(60)))
            #expect(try Self.knownValues(ledger, subject: "kid-ben") == [Self.phone(7).0])
        }
    }

    /// A handle asked about again is matched from the tokens asked for lately, by the lookup key that made them: the
    /// same handle of two subjects has two tokens, a full memo starts again, and an erasure is seen at once.
    @Test func aHandleAskedAgainIsMatchedUnderItsOwnSubjectsKey() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded("recent tokens"))
            let shared = Self.phone(1), onlyBen = Self.phone(2)
            try await ledger.append(json:
                JSONLine.observed("o1", checked: [shared], known: [shared], at: "09:00:00", recorded: "09:00:01"),
                JSONLine.observed("o2", subject: "kid-ben", checked: [shared, onlyBen], known: [shared, onlyBen], at: "09:01:00", recorded: "09:01:01"))
            func known(_ handle: (String, String), _ subject: String) throws -> Bool {
                try ledger.read { try $0.isKnownHandle(CommunicationHandle(value: handle.0, kind: .phoneNumber), subject: subject) }
            }
            for _ in 0..<2 {
                #expect(try known(shared, "kid-ava") && known(shared, "kid-ben"))
                #expect(try !known(onlyBen, "kid-ava") && known(onlyBen, "kid-ben"))
            }
            // More handles asked than the memo keeps: the answers stay the same.
            for n in 10..<(10 + KeyRing.recentTokensLimit + 10) { #expect(try !known(Self.phone(n), "kid-ava")) }
            #expect(try known(shared, "kid-ava") && known(onlyBen, "kid-ben"))
            // An erased handle is not matched by value, asked before or not.
            _ = try await ledger.erase(subject: "kid-ben", Erasure(basis: .guardianRequest), occurredAt: try Timestamp(rfc3339: "2026-11-20T10:00:00Z"))
            #expect(try !known(shared, "kid-ben") && !known(onlyBen, "kid-ben"))
            #expect(try known(shared, "kid-ava"))
        }
    }

    @Test func anErasureBeforeATimeKeepsTheValuesThatLaterEventsHoldAndNoOther() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded("directory cut"))
            let (a, b) = (Self.phone(1), Self.phone(2))
            try await ledger.append(json:
                JSONLine.observed("o1", checked: [a, b], known: [a, b], at: "09:00:00", recorded: "09:00:01"),
                JSONLine.observed("o2", checked: [b], known: [b], at: "11:00:00", recorded: "11:00:01"))
            try await ledger.append([try KeyErasureTests.erasure("erase-1", subject: "kid-ava", at: "2026-11-20T12:00:00Z", before: "2026-11-20T10:00:00Z")])
            // `b` reads from the kept observation; `a`, known from the erased one only, is erased, and so is `b` as
            // the erased observation made it known.
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == ["(erased, seq 3)", b.0])
            #expect(try Self.knownValues(ledger, subject: "kid-ava", asOf: .seq(1)) == ["(erased, seq 3)", "(erased, seq 3)"])
            let values = try ledger.environment.read { try HandleDirectory.values(of: "kid-ava", $0, ledger.tables) }
            #expect(values?.handles.map(\.value) == [b.0])
            #expect(try Self.entries(ledger, subject: "kid-ava") == (chunks: 1, index: 1))
            // A value named again after the erasure is held again.
            try await ledger.append(json: JSONLine.observed("o3", checked: [a], known: [a], at: "13:00:00", recorded: "13:00:01"))
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == [a.0, b.0])
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }

    @Test func aReaderSeesTheValuesAddedSinceItLastReadThem() async throws {
        try await withLedger(mapSize: 8 << 20, seed: "directory reread") { ledger in
            try await ledger.append(json: JSONLine.observed("o1", checked: [Self.phone(1)], known: [Self.phone(1)], at: "09:00:00", recorded: "09:00:01"))
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == [Self.phone(1).0])
            // The same chunk, under the same key, holds one more value: what the last reader opened is stale.
            try await ledger.append(json: JSONLine.observed("o2", checked: [Self.phone(2)], known: [Self.phone(2)], at: "09:01:00", recorded: "09:01:01"))
            #expect(try Self.entries(ledger, subject: "kid-ava") == (chunks: 1, index: 2))
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == [Self.phone(1).0, Self.phone(2).0])
            #expect(try Self.knownValues(ledger, subject: "kid-ava", asOf: .seq(1)) == [Self.phone(1).0])
            // Read from the directory, not from the events that named them.
            let values = try ledger.environment.read { try HandleDirectory.values(of: "kid-ava", $0, ledger.tables) }
            #expect(values?.handles.map(\.value).sorted() == [Self.phone(1).0, Self.phone(2).0])
            try await ledger.append([try KeyErasureTests.erasure("erase-1", subject: "kid-ava", at: "2026-11-20T12:00:00Z")])
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == ["(erased, seq 3)", "(erased, seq 3)"])
        }
    }

    @Test func aWholeErasureDeletesTheSubjectsValuesAndNoOthers() async throws {
        try await withLedger(mapSize: 8 << 20, seed: "directory whole") { ledger in
            try await ledger.append(json:
                JSONLine.observed("o1", checked: [Self.phone(1)], known: [Self.phone(1)], at: "09:00:00", recorded: "09:00:01"),
                JSONLine.observed("o2", subject: "kid-ben", checked: [Self.phone(1)], known: [Self.phone(1)], at: "09:00:00", recorded: "09:00:01"))
            try await ledger.append([try KeyErasureTests.erasure("erase-1", subject: "kid-ava", at: "2026-11-20T12:00:00Z")])
            #expect(try Self.entries(ledger, subject: "kid-ava") == (chunks: 0, index: 0))
            #expect(try Self.entries(ledger, subject: "kid-ben") == (chunks: 1, index: 1))
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == ["(erased, seq 3)"])
            #expect(try Self.knownValues(ledger, subject: "kid-ben") == [Self.phone(1).0])
            try await ledger.append(json: JSONLine.observed("o3", checked: [Self.phone(2)], known: [Self.phone(2)], at: "13:00:00", recorded: "13:00:01"))
            #expect(try Self.knownValues(ledger, subject: "kid-ava") == ["(erased, seq 3)", Self.phone(2).0])
        }
    }

    @Test func aLedgerWithoutHandleValuesIsReadFromItsEventsAndFilledWhenOpenedForWriting() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            var ledger: Ledger? = try Ledger(path: path, options: .seeded("directory fill"))
            try await ledger!.append(json:
                JSONLine.observed("o1", checked: [Self.phone(1), Self.phone(2)], known: [Self.phone(1)], at: "09:00:00", recorded: "09:00:01"),
                JSONLine.asked("a1", question: QID.q1, at: "09:05:00", recorded: "09:05:01", people: [Self.phone(3)]),
                JSONLine.answered("r1", question: QID.q1, choice: "approve", at: "09:06:00", recorded: "09:06:01"))
            let expected = try Self.knownValues(ledger!, subject: "kid-ava")
            #expect(expected == [Self.phone(1).0, Self.phone(3).0])
            await ledger!.close()
            ledger = nil
            // The table as a ledger made before it kept handle values lacks it.
            let environment = try Environment(path: path, options: .init(maxDatabases: 32))
            try environment.write { txn in _ = try txn.deleteDatabase(named: StorageTable.handleValues.rawValue) }
            try environment.close()

            let reading = try Ledger(path: path, options: .init(readOnly: true))
            #expect(reading.tables.handleValues == nil)
            #expect(try Self.knownValues(reading, subject: "kid-ava") == expected)
            await reading.close()
            #expect(try await Ledger.verify(path: path).isIntact)

            let writing = try Ledger(path: path, options: .seeded("directory fill"))
            #expect(try Self.entries(writing, subject: "kid-ava") == (chunks: 1, index: 3))
            #expect(try Self.knownValues(writing, subject: "kid-ava") == expected)
            await writing.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }

    /// Changes the `handleValues` entries of the ledger at `path` (closed) with `change`, in one write.
    static func changeHandleValues(_ path: String, _ change: (WriteTransaction, Database) throws -> Void) throws {
        let environment = try Environment(path: path, options: .init(maxDatabases: 32))
        let db = try environment.openDatabase(StorageTable.handleValues.rawValue, create: false)
        try environment.write { txn in try change(txn, db) }
        try environment.close()
    }

    @Test func verifyFindsAChangedChunkAForeignTokenAMissingChunkAndAStrayEntryWithoutAKey() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded("directory damage"))
            try await ledger.append(json: JSONLine.observed("o1", checked: [Self.phone(1), Self.phone(2)], known: [Self.phone(1)], at: "09:00:00", recorded: "09:00:01"))
            await ledger.close()
            let copy = directory + "/copy"
            #expect(try await Ledger.verify(path: path).isIntact)
            let prefix = Keys.subjectPrefix("kid-ava")
            let damages: [(String, (WriteTransaction, Database) throws -> Void)] = [
                ("does not match its checksum", { txn, db in
                    var chunk = Array(try #require(try txn.reader.get(db, key: HandleDirectory.chunkKey(prefix, 0))))
                    chunk[20] ^= 0x01
                    try txn.put(db, key: HandleDirectory.chunkKey(prefix, 0), value: chunk)
                }),
                ("indexes a handle that none of kid-ava's events", { txn, db in
                    try txn.put(db, key: HandleDirectory.indexKey(prefix, token: [UInt8](repeating: 7, count: 16)), value: Keys.seq(0))
                }),
                ("not numbered and filled in order", { txn, db in
                    _ = try txn.delete(db, key: HandleDirectory.chunkKey(prefix, 0))
                }),
                ("an entry of no known form", { txn, db in
                    try txn.put(db, key: prefix + [3, 1, 2], value: [])
                }),
            ]
            for (problem, damage) in damages {
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: path, toPath: copy)
                try Self.changeHandleValues(copy, damage)
                let report = try await Ledger.verify(path: copy)
                #expect(report.problem?.contains(problem) == true, "\(problem): \(report.problem ?? "intact")")
            }
        }
    }
}
