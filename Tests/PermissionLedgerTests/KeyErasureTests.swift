import Crypto
import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// docs/STORAGE.md, "Erasure": a `subject.erased` event destroys the keys of what it erases, in the key store,
/// and nothing else.
@Suite(.timeLimit(.minutes(10)))
struct KeyErasureTests {
    /// Every data key the ledger's key store holds now, by slot.
    static func dataKeys(_ ledger: Ledger) throws -> [UInt64: [UInt8]] {
        let ring = try #require(ledger.tables.keyRing)
        var keys: [UInt64: [UInt8]] = [:]
        for slot in 0..<ring.store.slotCount {
            if let key = try ring.store.key(slot: slot) { keys[slot] = KeyStoreTests.keyBytes(key) }
        }
        return keys
    }

    /// The files of `directory` that hold `bytes`.
    static func files(in directory: String, holding bytes: [UInt8]) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted().filter { name in
            KeyStoreTests.bytes(directory + "/" + name).contains(subsequence: bytes)
        }
    }

    /// The JSON lines of `subject`'s events.
    static func lines(_ ledger: Ledger, subject: String) throws -> [String] {
        try ledger.read { view in
            var lines: [String] = []
            try view.history(subject: subject, toSeq: .max) { lines.append(EventJSON.encode($0.event)) }
            return lines
        }
    }

    /// The event at `seq`, as a query reads it; `nil` when it does not read.
    static func event(_ ledger: Ledger, seq: UInt64) -> PermissionEvent? {
        try? ledger.read { view in
            var found: PermissionEvent?
            try view.forEachEvent(after: seq - 1, through: seq) { found = $0.event }
            return found
        }
    }

    static func erasure(_ id: String, subject: String, at time: String, before: String? = nil) throws -> PermissionEvent {
        PermissionEvent(
            id: id, subject: subject, occurredAt: try Timestamp(rfc3339: time), recordedAt: try Timestamp(rfc3339: time),
            payload: .subjectErased(Erasure(basis: .guardianRequest, reference: "case-4711", before: try before.map { try Timestamp(rfc3339: $0) })))
    }

    @Test func aWholeErasureDestroysEveryKeyOfTheSubjectAndNoOther() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded())
            try await ledger.importFixture("family-day.jsonl")
            let before = try Self.dataKeys(ledger)
            let head = try ledger.head()
            let subject = try #require(try ledger.read { try $0.subjects() }.first)
            let other = try #require(try ledger.read { try $0.subjects() }.last)
            #expect(subject != other)
            let otherExport = try Self.lines(ledger, subject: other)

            try await ledger.append([try Self.erasure("erase-1", subject: subject, at: "2026-11-21T10:00:00Z")])
            let after = try Self.dataKeys(ledger)
            let destroyed = Set(before.keys).subtracting(after.keys)
            #expect(!destroyed.isEmpty)
            // Every destroyed key is gone from every file of the ledger's directory, the key store included.
            for slot in destroyed {
                #expect(try Self.files(in: path, holding: before[slot]!) == [], "slot \(slot)")
            }
            // The other subject's events read as before, and the log still verifies.
            let otherAfter = try Self.lines(ledger, subject: other)
            #expect(otherAfter == otherExport)
            #expect(try ledger.head().seq == head.seq + 1)
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }

    @Test func anErasureCommittedBeforeACrashIsCarriedOutWhenTheLedgerOpens() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            var slots: [UInt64] = []
            var keys: [UInt64: [UInt8]] = [:]
            do {
                let ledger = try Ledger(path: path, options: .seeded())
                try await ledger.importFixture("decline.jsonl")
                keys = try Self.dataKeys(ledger)
                let subject = try #require(try ledger.read { try $0.subjects() }.first)
                let tables = ledger.tables
                let ring = try #require(tables.keyRing)
                // The erasure's transaction commits; the process dies before the key store is overwritten.
                slots = try ledger.environment.write { txn in
                    try ring.erase(txn, tables, subject: subject, basis: .guardianRequest, before: nil, erasureSeq: try ledger.head().seq + 1)
                }
                #expect(!slots.isEmpty)
                // Marked, not yet overwritten: the key store still opens the slots.
                for slot in slots { #expect(try ring.store.key(slot: slot) != nil) }
                await ledger.close()
            }
            let reopened = try Ledger(path: path, options: .seeded())
            let ring = try #require(reopened.tables.keyRing)
            for slot in slots {
                #expect(try ring.store.key(slot: slot) == nil, "slot \(slot) overwritten when the ledger opened")
                #expect(try Self.files(in: path, holding: keys[slot]!) == [], "slot \(slot)")
            }
            await reopened.close()
        }
    }

    @Test func anErasureBeforeATimeInsideADayKeepsTheLaterEventsOfThatDay() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded())
            try await ledger.append(json:
                JSONLine.observed("early", checked: [("+14155550101", "phoneNumber")], known: [], at: "09:00:00", recorded: "09:00:00"),
                JSONLine.observed("late", checked: [("+14155550102", "phoneNumber")], known: [], at: "15:00:00", recorded: "15:00:00"))
            try await ledger.append([try Self.erasure("cut", subject: "kid-ava", at: "2026-11-20T16:00:00Z", before: "2026-11-20T12:00:00Z")])
            let early = try #require(Self.event(ledger, seq: 1), "an erased event reads, as erased")
            #expect(early.erased == ErasureMark(seq: 3, basis: .guardianRequest))
            #expect(PersonalFields(of: early).entries.allSatisfy { $0.value.isEmpty }, "its handle's value is gone")
            let late = try #require(Self.event(ledger, seq: 2), "the event after the cut keeps its key")
            #expect(late.erased == nil)
            #expect(late.payload == (try decodeEvent(JSONLine.observed("late", checked: [("+14155550102", "phoneNumber")], known: [], at: "15:00:00", recorded: "15:00:00"))).payload)
        }
    }

    @Test func aWholeErasureMarksEveryEarlierEventWithPersonalFieldsAndNoLaterOne() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.importFixture("family-day.jsonl")
            let subject = try #require(try ledger.read { try $0.subjects() }.first)
            let head = try ledger.head().seq
            let before = try (1...head).map { try #require(Self.event(ledger, seq: $0)) }
            try await ledger.append([try Self.erasure("erase-1", subject: subject, at: "2026-11-21T10:00:00Z")])
            try await ledger.append(json: #"{"type":"handles.observed","id":"afterwards","subject":"\#(subject)","occurredAt":"2026-11-21T11:00:00Z","recordedAt":"2026-11-21T11:00:00Z","checked":[{"value":"+14155550199","kind":"phoneNumber"}],"known":[]}"#)
            var erased = 0
            for old in before {
                let now = try #require(Self.event(ledger, seq: old.seq!), "seq \(old.seq!) reads")
                if old.subject == subject, !PersonalFields(of: old).isEmpty {
                    erased += 1
                    #expect(now.erased == ErasureMark(seq: head + 1, basis: .guardianRequest), "seq \(old.seq!)")
                    #expect(PersonalFields(of: now).entries.allSatisfy { $0.value.isEmpty }, "seq \(old.seq!)")
                    #expect(now.hash == old.hash && now.type == old.type && now.occurredAt == old.occurredAt, "seq \(old.seq!)")
                } else {
                    #expect(now == old, "seq \(old.seq!): nothing erased")
                }
            }
            #expect(erased > 0)
            let later = try #require(Self.event(ledger, seq: head + 2))
            #expect(later.erased == nil)
            #expect(!PersonalFields(of: later).isEmpty, "what the subject records afterwards is new data, readable")
        }
    }

    @Test func anErasedHandleIsNoLongerMatchedButStaysAMember() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            let phone = try CommunicationHandle(value: "+14155550101", kind: .phoneNumber)
            try await ledger.append(json: JSONLine.observed("seen", checked: [("+14155550101", "phoneNumber")], known: [("+14155550101", "phoneNumber")], at: "09:00:00", recorded: "09:00:00"))
            #expect(try ledger.read { try $0.isKnownHandle(phone, subject: "kid-ava") })
            try await ledger.append([try Self.erasure("erase-1", subject: "kid-ava", at: "2026-11-20T10:00:00Z")])
            // As if it were not in the set: at the head, and as of the point before the erasure.
            #expect(try !ledger.read { try $0.isKnownHandle(phone, subject: "kid-ava") })
            #expect(try !ledger.read(asOf: .seq(1)) { try $0.isKnownHandle(phone, subject: "kid-ava") })
            // A later event of the subject starts a new lookup key, under which the old token does not match either.
            try await ledger.append(json: JSONLine.observed("later", checked: [("+14155550102", "phoneNumber")], known: [], at: "11:00:00", recorded: "11:00:00"))
            #expect(try !ledger.read { try $0.isKnownHandle(phone, subject: "kid-ava") })
            // The set still lists it, erased, with its membership.
            let known = try ledger.read { try $0.knownHandles(subject: "kid-ava") }
            try #require(known.count == 1)
            #expect(known[0].erased == ErasureMark(seq: 2, basis: .guardianRequest))
            #expect(known[0].handle.kind == .phoneNumber && known[0].handle.value.isEmpty)
            #expect(known[0].source == .observation(1))
        }
    }
}
