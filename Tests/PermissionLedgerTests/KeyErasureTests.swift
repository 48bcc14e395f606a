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

    @Test(arguments: Ledger.Options.sealedFormats) func aWholeErasureDestroysEveryKeyOfTheSubjectAndNoOther(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded(format: format))
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

    /// Runs `body` in a read of `ledger`'s head begun before `erasure` is appended, and committed, on another thread:
    /// the erasure overwrites its keys while the read is still open.
    static func readingAcross<T>(_ ledger: Ledger, _ erasure: PermissionEvent, _ body: (LedgerView) throws -> T) throws -> T {
        try ledger.read(asOf: .seq(try ledger.head().seq)) { view in
            let erased = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? ledger.appendSynchronously([erasure])
                erased.signal()
            }
            erased.wait()
            return try body(view)
        }
    }

    /// An erasure destroys its keys as soon as it commits, while readers that began before it may still be reading
    /// their older snapshot, in this process or another: what they meet erased is an error to read again, not
    /// damage, and not the event erased by an erasure their log does not hold (an export would carry that into a
    /// file no import takes); another subject's events read as before.
    @Test(arguments: Ledger.Options.sealedFormats) func aReaderThatBeganBeforeAnErasureIsToldToReadAgain(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded(format: format))
            try await ledger.importFixture("family-day.jsonl")
            let head = try ledger.head()
            let subject = try #require(try ledger.read { try $0.subjects() }.first)
            let other = try #require(try ledger.read { try $0.subjects() }.last)
            let otherLines = try Self.lines(ledger, subject: other)
            let erasure = try Self.erasure("erase-1", subject: subject, at: "2026-11-21T10:00:00Z")

            let (history, handles, otherLinesThen) = try Self.readingAcross(ledger, erasure) { view in
                var otherLines: [String] = []
                try view.history(subject: other, toSeq: head.seq) { otherLines.append(EventJSON.encode($0.event)) }
                return (ledgerError { try view.history(subject: subject, toSeq: head.seq) { _ in } },
                        ledgerError { _ = try view.knownHandles(subject: subject) }, otherLines)
            }
            #expect(try ledger.head().seq == head.seq + 1, "the erasure was appended")
            for error in [history, handles] {
                #expect(error?.kind == .storage && error?.remedy == .readAgain, "\(String(describing: error))")
                #expect(error?.description.hasSuffix("erased by seq \(head.seq + 1), recorded while this read was going on; read again") == true,
                        "\(String(describing: error))")
            }
            #expect(otherLinesThen == otherLines, "another subject reads as before")
            // Read again, it reads erased.
            #expect(try ledger.read { try $0.knownHandles(subject: subject) }.allSatisfy { $0.erased?.seq == head.seq + 1 })
        }
    }

    /// What an erasure with a cut keeps readable, under keys of its own, reads as it was in a read that began before
    /// the erasure.
    @Test(arguments: Ledger.Options.sealedFormats) func aReaderThatBeganBeforeAnErasureWithACutReadsWhatItKept(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded(format: format))
            let early = JSONLine.observed("early", checked: [("+14155550101", "phoneNumber")], known: [], at: "09:00:00", recorded: "09:00:00")
            let late = JSONLine.observed("late", checked: [("+14155550102", "phoneNumber")], known: [], at: "15:00:00", recorded: "15:00:00")
            try await ledger.append(json: early, late)
            let cut = try Self.erasure("cut", subject: "kid-ava", at: "2026-11-20T16:00:00Z", before: "2026-11-20T12:00:00Z")
            let (kept, erased) = try Self.readingAcross(ledger, cut) { view in
                var kept: [PermissionEvent] = []
                try view.forEachEvent(after: 1, through: 2) { kept.append($0.event) }
                return (kept, ledgerError { try view.forEachEvent(after: 0, through: 1) { _ in } })
            }
            let written = try decodeEvent(late).payload
            #expect(kept.count == 1 && kept[0].erased == nil && kept[0].payload == written, "\(kept)")
            #expect(erased?.kind == .storage && erased?.remedy == .readAgain, "\(String(describing: erased))")
        }
    }

    /// A read given retries is called again on a newer snapshot when an erasure recorded while it ran destroyed a key
    /// it needed, and answers with the erased values marked; without retries, or with too few, the caller is told to
    /// read again.
    @Test(arguments: Ledger.Options.sealedFormats) func aReadWithRetriesReadsAgainAfterAnErasure(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded(format: format))
            try await ledger.importFixture("family-day.jsonl")
            let head = try ledger.head()
            let subjects = try ledger.read { try $0.subjects() }
            #expect(subjects.count >= 2)

            /// Reads `subject`'s known handles as of the fixture's head with `retries`, the first call of the body
            /// recording an erasure of that subject, committed while it reads.
            func knownHandles(of subject: String, retries: Int) throws -> (handles: [KnownHandle], calls: Int) {
                let erasure = try Self.erasure("erase-\(subject)", subject: subject, at: "2026-11-21T10:00:00Z")
                var calls = 0
                let handles = try ledger.read(asOf: .seq(head.seq), retries: retries) { view in
                    calls += 1
                    if calls == 1 {
                        let erased = DispatchSemaphore(value: 0)
                        Thread.detachNewThread {
                            _ = try? ledger.appendSynchronously([erasure])
                            erased.signal()
                        }
                        erased.wait()
                    }
                    return try view.knownHandles(subject: subject)
                }
                return (handles, calls)
            }

            let error = ledgerError { _ = try knownHandles(of: subjects[0], retries: 0) }
            #expect(error?.remedy == .readAgain, "\(String(describing: error))")
            let again = try knownHandles(of: subjects[1], retries: 1)
            let erasureSeq = try ledger.head().seq
            #expect(erasureSeq == head.seq + 2)
            #expect(again.calls == 2, "read once more")
            #expect(!again.handles.isEmpty && again.handles.allSatisfy { $0.erased?.seq == erasureSeq }, "\(again.handles)")
        }
    }

    /// A question asked about again is taken from the events opened lately, by the key that opened them: an erasure
    /// is seen at once, and another subject's questions read as before.
    @Test(arguments: Ledger.Options.sealedFormats) func aQuestionOpenedBeforeAnErasureReadsErasedAfterIt(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded(format: format))
            try await ledger.importFixture("family-day.jsonl")
            let all = try ledger.read { try $0.questions() }
            let subject = try #require(all.first?.subject)
            #expect(all.contains { $0.subject != subject })
            func statuses() throws -> [QuestionStatus] { try ledger.read { view in try all.map { try #require(try view.question($0.question.id)) } } }
            let first = try statuses(), again = try statuses()
            #expect(first == again)
            #expect(first.allSatisfy { $0.erased == nil } && first.contains { !$0.handles.isEmpty })

            try await ledger.append([try Self.erasure("erase-1", subject: subject, at: "2026-11-21T10:00:00Z")])
            let erasureSeq = try ledger.head().seq
            let after = try statuses()
            for (before, now) in zip(first, after) {
                if before.subject == subject {
                    #expect(now.erased?.seq == erasureSeq && now.handles.allSatisfy { $0 == .erased(now.erased!) }, "\(now.question.id)")
                } else {
                    #expect(now == before, "\(now.question.id)")
                }
            }
        }
    }

    @Test(arguments: Ledger.Options.sealedFormats) func anErasureCommittedBeforeACrashIsCarriedOutWhenTheLedgerOpens(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            var slots: [UInt64] = []
            var keys: [UInt64: [UInt8]] = [:]
            do {
                let ledger = try Ledger(path: path, options: .seeded(format: format))
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
            let reopened = try Ledger(path: path, options: .seeded(format: format))
            let ring = try #require(reopened.tables.keyRing)
            for slot in slots {
                #expect(try ring.store.key(slot: slot) == nil, "slot \(slot) overwritten when the ledger opened")
                #expect(try Self.files(in: path, holding: keys[slot]!) == [], "slot \(slot)")
            }
            await reopened.close()
        }
    }

    @Test(arguments: Ledger.Options.sealedFormats) func anErasureBeforeATimeInsideADayKeepsTheLaterEventsOfThatDay(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded(format: format))
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

    /// A cut inside a day keeps readable what the subject recorded after it, that day and on the days after, whose
    /// fields other day keys seal; a second cut inside one of those days does the same there.
    @Test(arguments: Ledger.Options.sealedFormats) func anErasureBeforeATimeInsideADayKeepsTheDaysAfterIt(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded(format: format))
            func observed(_ id: String, _ value: String, on day: String, at time: String) -> String {
                JSONLine.observed(id, checked: [(value, "phoneNumber")], known: [], at: time, recorded: time)
                    .replacingOccurrences(of: "2026-11-20", with: day)
            }
            let lines = [observed("early", "+14155550101", on: "2026-11-20", at: "09:00:00"),
                         observed("late", "+14155550102", on: "2026-11-20", at: "15:00:00"),
                         observed("next-day", "+14155550103", on: "2026-11-21", at: "10:00:00"),
                         observed("day-after", "+14155550104", on: "2026-11-22", at: "08:00:00")]
            try await ledger.append(json: lines[0], lines[1], lines[2], lines[3])
            let written = try lines.map { try decodeEvent($0).payload }
            let store = try #require(ledger.tables.keyRing).store
            let slots = store.slotCount

            try await ledger.append([try Self.erasure("cut-1", subject: "kid-ava", at: "2026-11-22T09:00:00Z", before: "2026-11-20T12:00:00Z")])
            // Two keys are made: one of its own for the event after the cut on the cut's day, and the values key.
            #expect(store.slotCount == slots + 2)
            #expect(Self.event(ledger, seq: 1)?.erased == ErasureMark(seq: 5, basis: .guardianRequest))
            for seq in 2...4 {
                let event = try #require(Self.event(ledger, seq: UInt64(seq)), "seq \(seq) reads")
                #expect(event.erased == nil && event.payload == written[seq - 1], "seq \(seq) is after the cut")
            }

            try await ledger.append([try Self.erasure("cut-2", subject: "kid-ava", at: "2026-11-22T10:00:00Z", before: "2026-11-21T12:00:00Z")])
            #expect(Self.event(ledger, seq: 2)?.erased == ErasureMark(seq: 6, basis: .guardianRequest))
            #expect(Self.event(ledger, seq: 3)?.erased == ErasureMark(seq: 6, basis: .guardianRequest))
            let last = try #require(Self.event(ledger, seq: 4))
            #expect(last.erased == nil && last.payload == written[3])
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }

    /// The record of the event at `seq` as stored, after its chain hash.
    static func storedRecord(_ ledger: Ledger, seq: UInt64) throws -> (hash: [UInt8], record: SealedRecord) {
        let events = ledger.tables.events
        let value = try #require(try ledger.environment.read { txn in try txn.get(events, key: Keys.seq(seq)).map { Array($0) } })
        return (Array(value.prefix(32)), try value.dropFirst(32).withUnsafeBytes { try SealedRecord(stored: $0) })
    }

    /// An erasure that must seal a damaged event's fields again (format 3) fails, names the event, and records
    /// nothing.
    @Test func anErasureThatMeetsADamagedSealedBoxNamesItsEvent() async throws {
        try await withLedger(seed: "damaged box") { ledger in
            try await ledger.append(json:
                JSONLine.observed("early", checked: [("+14155550101", "phoneNumber")], known: [], at: "09:00:00", recorded: "09:00:00"),
                JSONLine.observed("late", checked: [("+14155550102", "phoneNumber")], known: [], at: "15:00:00", recorded: "15:00:00"))
            var (hash, record) = try Self.storedRecord(ledger, seq: 2)
            record.box[record.box.count - 1] ^= 0x01
            let events = ledger.tables.events
            try ledger.environment.write { txn in try txn.put(events, key: Keys.seq(2), value: hash + record.stored()) }
            do {
                try await ledger.append([try Self.erasure("cut", subject: "kid-ava", at: "2026-11-20T16:00:00Z", before: "2026-11-20T12:00:00Z")])
                Issue.record("the erasure was recorded over a damaged sealed box")
            } catch {
                #expect("\(error)".contains("seq 2"), "\(error)")
            }
            #expect(try ledger.head().seq == 2)
        }
    }

    /// Format 2 keeps the later events' own keys (derived from the day key) and their records as they are;
    /// format 3, whose day key sealed them itself, seals them again under new keys: their chained bytes, so their
    /// hashes, stay, and the day key is gone from every file.
    @Test(arguments: Ledger.Options.sealedFormats) func theEventsAnErasureKeepsInsideADayReadUnderKeysOfTheirOwn(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let lateLine = JSONLine.observed("late", checked: [("+14155550102", "phoneNumber")], known: [], at: "15:00:00", recorded: "15:00:00")
            var ledger = try Ledger(path: path, options: .seeded(format: format))
            try await ledger.append(json:
                JSONLine.observed("early", checked: [("+14155550101", "phoneNumber")], known: [], at: "09:00:00", recorded: "09:00:00"),
                lateLine,
                #"{"type":"permission.changed","id":"perm","subject":"kid-ava","occurredAt":"2026-11-20T15:30:00Z","recordedAt":"2026-11-20T15:30:00Z","permission":"camera","state":"askAgain","cause":"inferred"}"#)
            let keysBefore = try Self.dataKeys(ledger)
            let recordsBefore = try (1...3).map { try Self.storedRecord(ledger, seq: $0).record }
            let hashesBefore = try (1...3).map { try Self.storedRecord(ledger, seq: $0).hash }
            try await ledger.append([try Self.erasure("cut", subject: "kid-ava", at: "2026-11-20T16:00:00Z", before: "2026-11-20T12:00:00Z")])
            let keysAfter = try Self.dataKeys(ledger)
            let destroyed = Set(keysBefore.keys).subtracting(keysAfter.keys)
            #expect(!destroyed.isEmpty)
            for slot in destroyed { #expect(try Self.files(in: path, holding: keysBefore[slot]!) == [], "slot \(slot)") }

            let late = try (1...3).map { try Self.storedRecord(ledger, seq: $0).record }
            #expect(try (1...3).map { try Self.storedRecord(ledger, seq: $0).hash } == hashesBefore, "no hash changes")
            #expect(late.map(\.chained) == recordsBefore.map(\.chained), "no chained byte changes")
            #expect(late[0] == recordsBefore[0], "the erased event's record stays as it is")
            #expect(late[2] == recordsBefore[2], "an event without personal fields stays as it is")
            if format == 2 {
                #expect(late[1] == recordsBefore[1], "format 2 keeps the event's key, derived from the day key")
            } else {
                #expect(late[1].box != recordsBefore[1].box && late[1].tokens == recordsBefore[1].tokens, "format 3 seals the fields again")
            }
            // A new values key, and keys of their own: in format 2 for each later event of the day, in format 3
            // for the one with personal fields.
            #expect(keysAfter.count == keysBefore.count - destroyed.count + 1 + (format == 2 ? 2 : 1))

            // Reopened, it reads the same, verifies, and stays in its format.
            await ledger.close()
            ledger = try Ledger(path: path, options: .seeded(format: Ledger.formatVersion))
            let read = try #require(Self.event(ledger, seq: 2))
            #expect(read.erased == nil)
            #expect(read.payload == (try decodeEvent(lateLine)).payload)
            #expect(Self.event(ledger, seq: 1)?.erased == ErasureMark(seq: 4, basis: .guardianRequest))
            let meta = ledger.tables.meta
            #expect(try ledger.environment.read { txn in try txn.get(meta, key: Array("format".utf8)).map { Array($0) } } == [format])
            // What the subject records afterwards, on the same day, reads too.
            try await ledger.append(json: JSONLine.observed("after", checked: [("+14155550103", "phoneNumber")], known: [("+14155550103", "phoneNumber")], at: "17:00:00", recorded: "17:00:00"))
            #expect(Self.event(ledger, seq: 5)?.erased == nil)
            #expect(try ledger.read { try $0.isKnownHandle(try CommunicationHandle(value: "+14155550103", kind: .phoneNumber), subject: "kid-ava") })
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
        }
    }

    @Test(arguments: Ledger.Options.sealedFormats) func aWholeErasureMarksEveryEarlierEventWithPersonalFieldsAndNoLaterOne(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded(format: format))
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

    @Test(arguments: Ledger.Options.sealedFormats) func anErasedHandleIsNoLongerMatchedButStaysAMember(format: UInt8) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded(format: format))
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

    /// A subject asked about, erased with a cut, erased whole and given the same handle again, asked about after
    /// each: every answer is that of the snapshot it is asked in, not of the one in which the ledger first read the
    /// subject's `keys` entries (which it keeps for the queries of that snapshot).
    @Test func eachAnswerAboutASubjectFollowsItsErasures() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            let phone = try CommunicationHandle(value: "+14155550101", kind: .phoneNumber)
            func observed(_ id: String, at time: String) -> String {
                JSONLine.observed(id, checked: [("+14155550101", "phoneNumber")], known: [("+14155550101", "phoneNumber")], at: time, recorded: time)
            }
            func isKnown() throws -> Bool { try ledger.read { try $0.isKnownHandle(phone, subject: "kid-ava") } }
            try await ledger.append(json: observed("seen", at: "09:00:00"))
            #expect(try isKnown())
            // A cut after the observation: its handle is no longer matched, under the same lookup key.
            try await ledger.append([try Self.erasure("erase-1", subject: "kid-ava", at: "2026-11-20T10:30:00Z", before: "2026-11-20T10:00:00Z")])
            #expect(try !isKnown())
            // A whole erasure, then the handle again: matched under the subject's new lookup key.
            try await ledger.append([try Self.erasure("erase-2", subject: "kid-ava", at: "2026-11-20T11:00:00Z")])
            #expect(try !isKnown())
            try await ledger.append(json: observed("seen-again", at: "11:30:00"))
            #expect(try isKnown())
            #expect(try !ledger.read(asOf: .seq(3)) { try $0.isKnownHandle(phone, subject: "kid-ava") })
            let known = try ledger.read { try $0.knownHandles(subject: "kid-ava") }
            // The erased membership stays beside the new one.
            #expect(known.count == 2 && known.contains { $0.handle == phone && $0.erased == nil } && known.contains { $0.erased != nil }, "\(known)")
        }
    }
}
