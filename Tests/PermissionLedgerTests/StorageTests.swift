import Foundation
import PermissionLedger
import PermissionModel
import Testing

@Suite struct StorageTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    static func contents(_ directory: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return result
    }

    // MARK: Creating

    @Test func aNewLedgerIsPrivateToItsOwner() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path)
            try await ledger.append(json: JSONLine.permission("p1", "camera", "denied", at: "09:00:00", recorded: "09:00:01"))
            let directoryMode = try Self.mode(path)
            #expect(directoryMode == 0o700, "directory mode \(String(directoryMode, radix: 8))")
            for file in ["data.mdb", "lock.mdb"] {
                let fileMode = try Self.mode(path + "/" + file)
                #expect(fileMode == 0o600, "\(file) mode \(String(fileMode, radix: 8))")
            }
            #expect(ledger.path == path)
        }
    }

    @Test func aWritableOpenOfAnEmptyDirectoryMakesALedgerThere() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory, options: .init(durable: false))
            try await ledger.append(json: JSONLine.permission("p1", "camera", "denied", at: "09:00:00", recorded: "09:00:01"))
            #expect(try ledger.head().seq == 1)
            #expect(FileManager.default.fileExists(atPath: directory + "/data.mdb"))
        }
    }

    // MARK: What is not a ledger

    @Test func aReadOnlyOpenOfAMissingPathCreatesNothing() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/missing"
            let error = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: true)) }
            #expect(error?.kind == .missing)
            #expect(error?.message.contains(path) == true)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test func aReadOnlyOpenOfAnEmptyDirectoryIsNotALedger() async throws {
        try await withTemporaryDirectory { directory async throws in
            #expect(ledgerError { _ = try Ledger(path: directory, options: .init(readOnly: true)) }?.kind == .notALedger)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func aDirectoryOfOtherFilesIsNotALedger(readOnly: Bool) async throws {
        try await withTemporaryDirectory { directory async throws in
            try Data("my notes\n".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
            try FileManager.default.createDirectory(atPath: directory + "/photos", withIntermediateDirectories: false)
            let before = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            let error = ledgerError { _ = try Ledger(path: directory, options: .init(readOnly: readOnly)) }
            #expect(error?.kind == .notALedger)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == before, "nothing written")
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/notes.txt")) == Data("my notes\n".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/photos").isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func aFileIsNotALedger(readOnly: Bool) async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            try Data("not a ledger".utf8).write(to: URL(fileURLWithPath: path))
            #expect(ledgerError { _ = try Ledger(path: path, options: .init(readOnly: readOnly)) }?.kind == .notALedger)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("not a ledger".utf8))
        }
    }

    @Test(arguments: [false, true])
    func aForeignDataFileIsNotALedger(readOnly: Bool) async throws {
        try await withTemporaryDirectory { directory async throws in
            let junk = Data(repeating: 0xAB, count: 16 << 10)
            try junk.write(to: URL(fileURLWithPath: directory + "/data.mdb"))
            #expect(ledgerError { _ = try Ledger(path: directory, options: .init(readOnly: readOnly)) }?.kind == .notALedger)
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/data.mdb")) == junk)
        }
    }

    @Test func theLongestSubjectsIDsAndHandlesAreStoredAndFound() async throws {
        let subject = String(repeating: "é", count: 128)  // 256 bytes
        let id = String(repeating: "i", count: 128)
        // Two 256-byte custom handles that share their first 255 bytes, and a 20-digit phone number.
        let long1 = String(repeating: "h", count: 255) + "1"
        let long2 = String(repeating: "h", count: 255) + "2"
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked(id, question: QID.q1, subject: subject, at: "09:00:00", recorded: "09:00:01",
                               people: [(long2, "custom"), (long1, "custom"), ("+12345678901234567890", "phoneNumber")]),
                JSONLine.answered("e2", question: QID.q1, choice: "approve", subject: subject, at: "09:05:00", recorded: "09:05:01"),
                JSONLine.observed("e3", subject: subject, checked: [(long2, "custom")], known: [], at: "09:10:00", recorded: "09:10:01"),
                JSONLine.permission("e4", subject: subject, "camera", "authorized", at: "09:11:00", recorded: "09:11:01"))
            let known = try ledger.read { try $0.knownHandles(subject: subject) }
            #expect(known.map(\.handle.value) == [long1, "+12345678901234567890"])
            #expect(try ledger.read { try $0.isKnownHandle(try CommunicationHandle(value: long1, kind: .custom), subject: subject) })
            #expect(try !ledger.read { try $0.isKnownHandle(try CommunicationHandle(value: long2, kind: .custom), subject: subject) })
            #expect(try ledger.read { try $0.permissions(subject: subject) }.map(\.state) == [.authorized])
            #expect(try ledger.read { try $0.subjects() } == [subject])
            #expect(try await ledger.append(json:
                JSONLine.asked(id, question: QID.q1, subject: subject, at: "09:00:00", recorded: "09:20:00",
                               people: [(long2, "custom"), (long1, "custom"), ("+12345678901234567890", "phoneNumber")])).duplicates == 1)
            #expect(try await ledger.verify().isIntact)
        }
    }

    // MARK: Read-only ledgers

    @Test func aReadOnlyLedgerReadsButNeverWrites() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path)
                try await ledger.importFixture("approval-messages.jsonl")
            }
            let before = try Self.contents(path)["data.mdb"]
            let ledger = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try ledger.head().seq == 2)
            #expect(try await ledger.verify().isIntact)
            let event = try decodeEvent(JSONLine.permission("p1", "camera", "denied", at: "10:00:00", recorded: "10:00:01"))
            #expect(ledgerError { _ = try ledger.appendSynchronously([event]) } != nil)
            #expect(ledgerError { try ledger.rebuildProjections() } != nil)
            #expect(try ledger.head().seq == 2)
            #expect(try Self.contents(path)["data.mdb"] == before)
        }
    }

    // MARK: Size

    /// A million small events through a map that starts at 1 MiB and has to grow many times. About two minutes
    /// alone in a debug build; the limit leaves room for the rest of the suite running beside it on two cores.
    @Test(.timeLimit(.minutes(10)))
    func aMillionEventsFitAMapThatStartsAt1MiB() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/big", options: .init(mapSize: 1 << 20, durable: false))
            let subjects = ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"]
            let permissions = SystemPermission.allCases
            let states = SystemPermission.State.allCases
            let causes: [SystemPermission.Cause?] = [nil] + SystemPermission.Cause.allCases
            let start = try time("2026-11-20T00:00:00Z").microseconds
            func event(_ i: Int) -> PermissionEvent {
                let t = start + Int64(i) * 1_000
                return PermissionEvent(
                    id: "big-\(i)", subject: subjects[i % subjects.count], occurredAt: Timestamp(microseconds: t),
                    recordedAt: Timestamp(microseconds: t + 500),
                    payload: .permissionChanged(permissions[(i / subjects.count) % permissions.count], state: states[i % states.count], cause: causes[i % causes.count]))
            }
            let total = 1_000_000
            let batch = 50_000
            let clock = ContinuousClock()
            let began = clock.now
            for b in 0..<(total / batch) {
                let events = (b * batch..<(b + 1) * batch).map(event)
                let summary = try ledger.appendSynchronously(events)
                #expect(summary.appended == batch)
                #expect(summary.head.seq == UInt64((b + 1) * batch))
            }
            let elapsed = clock.now - began
            print("StorageTests: appended \(total) events in \(elapsed)")
            #expect(try ledger.head().seq == 1_000_000)

            // The state is the last event per (subject, permission), as of any point.
            for point in [total, total / 2] {
                var expected: [SystemPermission: SystemPermission.State] = [:]
                for i in stride(from: point - 4, to: 0, by: -4) where expected.count < permissions.count {
                    let e = event(i)
                    if case .permissionChanged(let p, let s, _) = e.payload, expected[p] == nil { expected[p] = s }
                }
                let actual = try ledger.read(asOf: .seq(UInt64(point))) { try $0.permissions(subject: "kid-ava") }
                #expect(actual.count == permissions.count)
                #expect(Dictionary(uniqueKeysWithValues: actual.map { ($0.permission, $0.state) }) == expected, "as of seq:\(point)")
            }
            #expect(try ledger.read { try $0.subjects() } == subjects)
            var last: PermissionEvent?
            last = try storedEvents(ledger, after: UInt64(total - 1)).last?.event
            #expect(last?.id == "big-\(total - 1)")
        }
    }
}
