import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// docs/spec/PRIVACY.md, "At rest": no personal field is stored as it is, anywhere in the ledger's directory.
@Suite(.timeLimit(.minutes(10)))
struct PersonalDataAtRestTests {
    /// Every personal value of the fixture's events that a byte search can tell from chance: values under 5
    /// bytes (a one-letter custom handle, a short title) occur by chance in random bytes, and are left out.
    static func personalValues(_ events: [PermissionEvent]) -> Set<String> {
        Set(events.flatMap { PersonalFields(of: $0).entries.map(\.value) }.filter { $0.utf8.count >= 5 })
    }

    /// Each personal value found in a file of `directory`, as `FILE: VALUE`.
    static func plaintextFound(in directory: String, values: Set<String>) throws -> [String] {
        var found: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            for value in values.sorted() where bytes.contains(subsequence: Array(value.utf8)) { found.append("\(name): \(value)") }
        }
        return found
    }

    @Test(arguments: Fixtures.valid)
    func noFileOfTheLedgerHoldsAPersonalValue(name: String) async throws {
        let events = try Fixtures.fixture(name).events
        let values = Self.personalValues(events)
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path, options: .init(durable: true))
                try await ledger.importFixture(name)
                // What the ledger shows, it holds: the search would find the values if they were stored as they are.
                let export = try exportText(ledger)
                // It shows every value of the events no erasure erased, and no value that only erased events held.
                let erased = Set(try storedEvents(ledger).filter { $0.event.erased != nil }.map(\.event.id))
                let readable = Set(Self.personalValues(events.filter { !erased.contains($0.id) }))
                #expect(readable.allSatisfy { export.contains($0) }, "the export shows every readable value")
                #expect(Set(values).subtracting(readable).allSatisfy { !export.contains($0) }, "the export shows no erased value")
                await ledger.close()
            }
            #expect(try Self.plaintextFound(in: path, values: values) == [])
            // Rebuilt derived tables hold no value either.
            try await Ledger.rebuildProjections(path: path)
            #expect(try Self.plaintextFound(in: path, values: values) == [])
        }
    }

    @Test func aLedgerWithItsKeyElsewhereIsCheckedWithoutItAndReadWithIt() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger", keyFile = directory + "/family.key"
            var options = Ledger.Options(durable: false)
            options.keyFile = keyFile
            do {
                let ledger = try Ledger(path: path, options: options)
                try await ledger.importFixture("several-handles.jsonl")
                await ledger.close()
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == ["data-keys", "data.mdb", "lock.mdb"])
            #expect(try KeyStoreTests.mode(keyFile) == 0o600)

            // Without the key: verify passes, what shows a personal field says where the key was looked for.
            #expect(try await Ledger.verify(path: path).isIntact)
            let withoutKey = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try withoutKey.head().seq == 3)
            let error = ledgerError { _ = try withoutKey.read { try $0.knownHandles(subject: "kid-cleo") } }
            #expect(error?.kind == .keyUnavailable)
            #expect(error?.message.contains(path + "/ledger.key") == true, "\(String(describing: error))")
            await withoutKey.close()
            #expect(ledgerError { _ = try Ledger(path: path, options: .init(durable: false)) }?.kind == .keyUnavailable,
                    "never opened for writing without its key, which would make a second one")

            // With it: the values come back.
            var reading = Ledger.Options(readOnly: true)
            reading.keyFile = keyFile
            let withKey = try Ledger(path: path, options: reading)
            let handles = try withKey.read { try $0.knownHandles(subject: "kid-cleo") }.map(\.handle.value)
            #expect(handles.contains("grandma.rose@example.com") || handles.contains("+14155550132"), "\(handles)")
            #expect(try await withKey.statistics().keyFile == keyFile)
        }
    }

    @Test func aNewLedgerWhoseKeyCannotBeMadeIsNotStartedWithoutOne() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            var options = Ledger.Options(durable: false)
            options.keyFile = directory + "/no such directory/ledger.key"
            #expect(ledgerError { _ = try Ledger(path: path, options: options) } != nil)
            // Nothing says a ledger exists there yet: the next open makes it, with a key.
            let ledger = try Ledger(path: path, options: .init(durable: false))
            try await ledger.importFixture("decline.jsonl")
            #expect(try await ledger.statistics().keyFile == path + "/ledger.key")
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }

    @Test func anotherLedgersKeyDoesNotOpenTheKeyStore() async throws {
        try await withTemporaryDirectory { directory async throws in
            let a = directory + "/a", b = directory + "/b"
            for path in [a, b] {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.importFixture("decline.jsonl")
                await ledger.close()
            }
            try FileManager.default.removeItem(atPath: a + "/ledger.key")
            try FileManager.default.copyItem(atPath: b + "/ledger.key", toPath: a + "/ledger.key")
            let error = ledgerError { _ = try Ledger(path: a, options: .init(readOnly: true)) }
            #expect(error?.kind == .damaged)
            #expect(error?.message.contains("does not open with the ledger's key") == true, "\(String(describing: error))")
        }
    }
}

extension PersonalDataAtRestTests {
    /// docs/spec/PRIVACY.md, "Effect": after each erasure, of each subject of each fixture in turn, no file holds a
    /// personal value or any key the erasure destroyed, and the export shows none of the subject's values.
    @Test(arguments: Fixtures.valid)
    func afterEachErasureNoFileHoldsAValueOrADestroyedKey(name: String) async throws {
        let values = Self.personalValues(try Fixtures.fixture(name).events)
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded(durable: true))
            try await ledger.importFixture(name)
            let subjects = try ledger.read { try $0.subjects() }
            var erasedAt = try #require(try ledger.head().recordedAt)
            for subject in subjects {
                let before = try KeyErasureTests.dataKeys(ledger)
                erasedAt = erasedAt.adding(seconds: 60)
                _ = try await ledger.erase(subject: subject, Erasure(basis: .guardianRequest), occurredAt: erasedAt)
                let after = try KeyErasureTests.dataKeys(ledger)
                for slot in Set(before.keys).subtracting(after.keys) {
                    #expect(try KeyErasureTests.files(in: path, holding: before[slot]!) == [], "\(name), \(subject): slot \(slot)")
                }
                #expect(try Self.plaintextFound(in: path, values: values) == [], "\(name), after erasing \(subject)")
                // What the subject recorded reads as erased: no value of its events is in the export any more.
                let export = try exportText(ledger)
                let own = try storedEvents(ledger).map(\.event).filter { $0.subject == subject && $0.erased != nil }
                for event in own {
                    #expect(event.erasedFields != nil, "\(name): seq \(event.seq!)")
                }
                #expect(!export.contains("\"salt\"") || subjects.last != subject, "\(name): every event is erased at the end")
            }
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }
}
