import Crypto
import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// Records of format version 2: the personal fields sealed apart from the envelope the chain hash covers.
@Suite struct SealedRecordTests {
    static let recordedAt = Timestamp(microseconds: 1_795_000_000_000_000)

    /// Every event of every fixture, with a seeded source so that failures repeat.
    static func fixtureEvents() throws -> [PermissionEvent] {
        try Fixtures.valid.flatMap { try Fixtures.fixture($0).events }
    }

    static func sealed(_ event: PermissionEvent, dayKey: SymmetricKey, lookupKey: SymmetricKey, secrets: SecretSource) throws -> SealedRecord {
        try SealedRecord.seal(
            event, seq: 7, recordedAt: recordedAt, eventKey: DataKeys.eventKey(dayKey: dayKey, seq: 7),
            tokens: TokenHasher(tokenKey: DataKeys.tokenKey(lookupKey: lookupKey)), secrets: secrets
        ).record
    }

    @Test func everyFixtureEventOpensAsItWasSealed() throws {
        let secrets = SecretSource.seeded("sealed-record-tests")
        let dayKey = secrets.key(for: "k1"), lookupKey = secrets.key(for: "k2")
        let events = try Self.fixtureEvents()
        #expect(events.count > 100)
        for event in events {
            let stored = try Self.sealed(event, dayKey: dayKey, lookupKey: lookupKey, secrets: secrets).stored()
            let read = try stored.withUnsafeBytes { try SealedRecord(stored: $0) }
            let opened = try read.open(eventKey: DataKeys.eventKey(dayKey: dayKey, seq: 7)).event
            #expect(EventRecord.encode(opened, recordedAt: Self.recordedAt) == EventRecord.encode(event, recordedAt: Self.recordedAt), "\(event.id)")
        }
    }

    @Test func noPersonalValueIsStoredInPlaintext() throws {
        let secrets = SecretSource.seeded("sealed-record-tests")
        let dayKey = secrets.key(for: "k3"), lookupKey = secrets.key(for: "k4")
        var searched = 0
        for event in try Self.fixtureEvents() {
            let stored = try Self.sealed(event, dayKey: dayKey, lookupKey: lookupKey, secrets: secrets).stored()
            // Values under 5 bytes are left out: random bytes hold one of them by chance.
            for entry in PersonalFields(of: event).entries where entry.value.utf8.count >= 5 {
                searched += 1
                #expect(!stored.contains(subsequence: Array(entry.value.utf8)), "\(event.id): \(entry.field) is in the record")
            }
        }
        #expect(searched > 50)
    }

    @Test func theChainedBytesHoldTheCommitmentAndNoKey() throws {
        let event = try decodeEvent(#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"+15551234567","kind":"phoneNumber"},"name":{}}]}}}}"#)
        let a = try Self.sealed(event, dayKey: SymmetricKey(size: .bits256), lookupKey: SymmetricKey(size: .bits256), secrets: .seeded("same"))
        let b = try Self.sealed(event, dayKey: SymmetricKey(size: .bits256), lookupKey: SymmetricKey(size: .bits256), secrets: .seeded("same"))
        // The same salt under other keys: the same chained bytes, another box and other tokens.
        #expect(a.chained == b.chained)
        #expect(a.box != b.box)
        #expect(a.tokens != b.tokens)
        #expect(a.tokens.count == DataKeys.tokenSize)
        // Another salt: another commitment.
        let c = try Self.sealed(event, dayKey: SymmetricKey(size: .bits256), lookupKey: SymmetricKey(size: .bits256), secrets: .seeded("other"))
        #expect(a.chained != c.chained)
        // The commitment is HMAC-SHA256 keyed by the salt over the canonical fields: recomputed here from the spec.
        let (envelope, commitment) = try a.chained.withUnsafeBytes { try SealedRecord.envelope($0) }
        let salt = SecretSource.seeded("same").bytes(32, for: "salt 7")
        let canonical: [UInt8] = [1, 12] + Array("+15551234567".utf8) + [2, 0] + [10, 7] + Array("Approve".utf8) + [10, 7] + Array("Decline".utf8)
        #expect(commitment == Array(HMAC<SHA256>.authenticationCode(for: canonical, using: SymmetricKey(data: salt))))
        // The envelope keeps the handle's kind and not its value; the empty name comes back from the sealed fields.
        guard case .questionAsked(let question) = envelope.payload else { Issue.record("not a question"); return }
        #expect(question.topic.handles.map(\.value) == [""])
        #expect(throws: EventRecord.DecodingError.self) { try a.open(eventKey: DataKeys.eventKey(dayKey: SymmetricKey(size: .bits256), seq: 7)) }
    }

    @Test func aWrongKeyOrAChangedEnvelopeDoesNotOpen() throws {
        let secrets = SecretSource.seeded("wrong-key")
        let dayKey = secrets.key(for: "k5")
        let event = try decodeEvent(#"{"type":"handles.observed","id":"ev-2","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","checked":[{"value":"robo_rex","kind":"custom"}],"known":[]}"#)
        var record = try Self.sealed(event, dayKey: dayKey, lookupKey: secrets.key(for: "k6"), secrets: secrets)
        #expect(throws: EventRecord.DecodingError.self) { try record.open(eventKey: DataKeys.eventKey(dayKey: dayKey, seq: 8)) }
        #expect(throws: EventRecord.DecodingError.self) { try record.open(eventKey: secrets.key(for: "k7")) }
        _ = try record.open(eventKey: DataKeys.eventKey(dayKey: dayKey, seq: 7))
        record.chained[record.chained.count - 40] ^= 1
        #expect(throws: EventRecord.DecodingError.self) { try record.open(eventKey: DataKeys.eventKey(dayKey: dayKey, seq: 7)) }
    }

    /// A query that hands out no salt opens the fields without checking them against the commitment (the box's
    /// tag covers the chained bytes, commitment included); what hands the salt out checks it.
    @Test func onlyAReadingThatHandsOutTheSaltChecksTheCommitment() throws {
        let secrets = SecretSource.seeded("salted")
        let dayKey = secrets.key(for: "k10")
        let eventKey = DataKeys.eventKey(dayKey: dayKey, seq: 7)
        let committed = try decodeEvent(#"{"type":"handles.observed","id":"ev-3","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","checked":[{"value":"robo_rex","kind":"custom"}],"known":[]}"#)
        let other = try decodeEvent(#"{"type":"handles.observed","id":"ev-3","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","checked":[{"value":"sk8rboi","kind":"custom"}],"known":[]}"#)
        var record = try Self.sealed(committed, dayKey: dayKey, lookupKey: secrets.key(for: "k11"), secrets: secrets)
        let salted = try record.open(eventKey: eventKey, salted: true)
        let unsalted = try record.open(eventKey: eventKey, salted: false)
        #expect(salted.salt != nil && salted.event.salt == salted.salt)
        #expect(unsalted.salt == nil && unsalted.event.salt == nil)
        #expect(EventRecord.encode(unsalted.event, recordedAt: Self.recordedAt) == EventRecord.encode(salted.event, recordedAt: Self.recordedAt))
        // Fields sealed under the record's chained bytes but not the ones its commitment covers: only a key holder
        // can make such a box. A query shows what it holds; an export, which would hand out the salt, refuses it.
        record.box = try SealedFields.seal(
            PersonalFields(of: other), salt: salted.salt!, key: eventKey, additionalData: record.chained, secrets: secrets, seq: 8)
        #expect(throws: EventRecord.DecodingError.self) {
            try record.open(eventKey: eventKey, salted: true)
        }
        let shown = try record.open(eventKey: eventKey, salted: false).event
        guard case .handlesObserved(let checked, _) = shown.payload else { Issue.record("not an observation"); return }
        #expect(checked.map(\.value) == ["sk8rboi"])
    }

    /// The opened fields are read as the event's decoding asks for them: a box whose fields do not fit the
    /// envelope (one a key holder sealed under the record's chained bytes) is damage, said as such, and never an
    /// event with a value out of place, whether the reading checks the commitment or not.
    @Test func sealedFieldsThatDoNotFitTheEnvelopeAreRefused() throws {
        let secrets = SecretSource.seeded("misfit")
        let eventKey = DataKeys.eventKey(dayKey: secrets.key(for: "k12"), seq: 7)
        let event = try decodeEvent(#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"+15551234567","kind":"phoneNumber"},"name":{"givenName":"Ada"}}]}}}}"#)
        var record = try Self.sealed(event, dayKey: secrets.key(for: "k12"), lookupKey: secrets.key(for: "k13"), secrets: secrets)
        func entry(_ code: UInt8, _ text: String) -> [UInt8] { [code, UInt8(text.utf8.count)] + Array(text.utf8) }
        let handle = entry(1, "+15551234567"), name = entry(2, "") + entry(4, "Ada")
        let choices = entry(10, "Approve") + entry(10, "Decline")
        let cases: [(String, [UInt8], String)] = [
            ("as sealed", handle + name + choices, ""),
            ("a choice's title missing", handle + name + entry(10, "Approve"), "expected choiceTitle, found none"),
            ("a value too many", handle + name + choices + entry(10, "Later"), "left over"),
            ("a description for the handle", entry(9, "Update") + name + choices, "expected handleValue, found description"),
            ("an empty handle", entry(1, "") + name + choices, "an empty handle"),
            ("a given name without a name", handle + entry(4, "Ada") + choices, "expected choiceTitle, found givenName"),
            ("an unknown field", handle + [99, 0] + choices, "unknown personal field 99"),
            ("a value that is not UTF-8", [1, 2, 0xC3, 0x28] + name + choices, "not UTF-8"),
            ("a cut value", handle + name + entry(10, "Approve") + [10, 9, 65], "exceeds the record"),
        ]
        let salt = secrets.bytes(32, for: "salt 7")
        for (what, fields, reason) in cases {
            let nonce = try ChaChaPoly.Nonce(data: secrets.bytes(12, for: what))
            record.box = Array(try ChaChaPoly.seal(salt + fields, using: eventKey, nonce: nonce, authenticating: record.chained).combined)
            guard !reason.isEmpty else {
                #expect(EventRecord.encode(try record.open(eventKey: eventKey, salted: false).event, recordedAt: Self.recordedAt)
                    == EventRecord.encode(event, recordedAt: Self.recordedAt), "\(what)")
                continue
            }
            for salted in [false, true] {
                #expect(throws: EventRecord.DecodingError.self, "\(what)") { try record.open(eventKey: eventKey, salted: salted) }
            }
            do {
                _ = try record.open(eventKey: eventKey, salted: false)
            } catch {
                #expect(error.reason.contains(reason), "\(what): \(error.reason)")
            }
        }
    }

    @Test func eventsWithoutPersonalFieldsHaveNoCommitmentAndNoBox() throws {
        let secrets = SecretSource.seeded("none")
        for line in [
            #"{"type":"question.askFailed","id":"ev-6","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"code":"unknown"}}"#,
            #"{"type":"permission.changed","id":"ev-11","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"authorized"}"#,
        ] {
            let record = try Self.sealed(try decodeEvent(line), dayKey: secrets.key(for: "k8"), lookupKey: secrets.key(for: "k9"), secrets: secrets)
            #expect(record.box.isEmpty)
            #expect(record.chained.last == 0)
        }
    }

    /// A record whose chained part commits to no personal field but whose trailer holds a sealed box (which no
    /// writer makes) is damage, whether or not the ledger holds a key for its subject's day, and `verify` says so.
    @Test func aSealedBoxWithoutACommitmentIsDamage() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded("box without commitment", durable: false))
            try await ledger.append(json:
                // kid-ava has a key for the day; kid-ben has none.
                JSONLine.observed("early", checked: [("+14155550101", "phoneNumber")], known: [], at: "09:00:00", recorded: "09:00:00"),
                JSONLine.permission("ava", "camera", "authorized", at: "10:00:00", recorded: "10:00:00"),
                JSONLine.permission("ben", subject: "kid-ben", "camera", "authorized", at: "10:00:00", recorded: "10:00:00"))
            for seq: UInt64 in [2, 3] {
                #expect(KeyErasureTests.event(ledger, seq: seq) != nil, "seq \(seq) reads before it is changed")
                var (hash, record) = try KeyErasureTests.storedRecord(ledger, seq: seq)
                #expect(record.box.isEmpty && record.chained.last == 0)
                record.box = Array(repeating: 0x5A, count: 40)
                let events = ledger.tables.events
                try ledger.environment.write { txn in try txn.put(events, key: Keys.seq(seq), value: hash + record.stored()) }
                let error = ledgerError {
                    try ledger.read { view in try view.forEachEvent(after: seq - 1, through: seq) { _ in } }
                }
                #expect(error?.kind == .damaged && error?.seq == seq, "\(String(describing: error))")
            }
            await ledger.close()
            let report = try await Ledger.verify(path: path)
            #expect(report.damagedSeq == 2, "\(report)")
            #expect(report.problem?.contains("sealed personal fields and no commitment") == true, "\(report)")
        }
    }

    /// Damage a query meets says where: the event's seq, or, in a row of a derived table, the ledger's path.
    @Test func damageAQueryMeetsSaysWhere() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded("damage says where", durable: false))
            try await ledger.append(json:
                JSONLine.asked("ask", question: QID.q1, at: "09:00:00", recorded: "09:00:00"),
                JSONLine.permission("camera", "camera", "authorized", at: "09:10:00", recorded: "09:10:00"))
            var (hash, record) = try KeyErasureTests.storedRecord(ledger, seq: 1)
            record.box[record.box.count - 1] ^= 0x01
            let (events, permissions) = (ledger.tables.events, ledger.tables[.permissions])
            try ledger.environment.write { txn in
                try txn.put(events, key: Keys.seq(1), value: hash + record.stored())
                let cursor = try txn.cursor(permissions)
                let first = try #require(try cursor.first())
                let key = Array(first.key)
                var value = Array(first.value)
                value[0] = 9
                try txn.put(permissions, key: key, value: value)
            }
            let question = ledgerError { _ = try ledger.read { try $0.question(QID.uuid(QID.q1)) } }
            #expect(question?.kind == .damaged && question?.seq == 1, "\(String(describing: question))")
            let row = ledgerError { _ = try ledger.read { try $0.permissions(subject: "kid-ava") } }
            #expect(row?.kind == .damaged && row?.message.hasPrefix(path + ": damaged record:") == true, "\(String(describing: row))")
        }
    }

    @Test func aDamagedTrailerIsRefused() throws {
        let secrets = SecretSource.seeded("trailer")
        let event = try decodeEvent(#"{"type":"handles.observed","id":"ev-2","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","checked":[{"value":"robo_rex","kind":"custom"}],"known":[]}"#)
        let stored = try Self.sealed(event, dayKey: secrets.key(for: "k10"), lookupKey: secrets.key(for: "k11"), secrets: secrets).stored()
        for cut in 1..<stored.count {
            let damaged = Array(stored.prefix(cut))
            // Whatever is cut, reading throws or reads a record that differs: it never traps.
            if let read = try? damaged.withUnsafeBytes({ try SealedRecord(stored: $0) }) { #expect(read.stored() != stored) }
        }
        var longer = stored
        longer[longer.count - 1] = 0xFF
        #expect(throws: EventRecord.DecodingError.self) { try longer.withUnsafeBytes { try SealedRecord(stored: $0) } }
        #expect(try stored.withUnsafeBytes { Array(try SealedRecord.chainedPart(of: $0)) } == (try stored.withUnsafeBytes { try SealedRecord(stored: $0) }).chained)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes: Foundation's search, built optimized, so that searching every
    /// file of a ledger for every personal value of a fixture takes milliseconds, not minutes, in a debug build.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        return Data(self).range(of: Data(needle)) != nil
    }
}
