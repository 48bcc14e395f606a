import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// Salts and commitments made on a second thread ahead of the rules (``CommitmentsAhead``): taken only for the very
/// fields they were made for, and what a batch sealed with them exports, verifies and imports as any other.
@Suite struct CommitmentsAheadTests {
    /// A batch of `count` events over three subjects: questions about two people (a name given), observations that
    /// name a handle twice (which the rules fold), answers, and permission changes.
    static func batch(_ count: Int) throws -> [PermissionEvent] {
        try (0..<count).map { index in
            let subject = "kid-\(index / 4 % 3)"
            let second = String(format: "%02d:%02d:%02d", 8 + index / 3600, index / 60 % 60, index % 60)
            let line: String
            switch index % 4 {
            case 0:
                line = JSONLine.asked("e\(index)", question: uuid(index), subject: subject, at: second, recorded: second,
                                      people: [("friend\(index)@example.com", "emailAddress"), ("+1555\(1_000_000 + index)", "phoneNumber")])
            case 1:
                line = JSONLine.answered("e\(index)", question: uuid(index - 1), choice: "approve", subject: subject, at: second, recorded: second)
            case 2:
                line = JSONLine.observed("e\(index)", subject: subject, checked: [("seen\(index)", "custom"), ("seen\(index)", "custom")],
                                         known: [("seen\(index)", "custom")], at: second, recorded: second)
            default:
                line = JSONLine.permission("e\(index)", subject: subject, "camera", index % 8 == 3 ? "authorized" : "denied", at: second, recorded: second)
            }
            return try #require(try EventJSON.decode(line: line))
        }
    }

    static func uuid(_ index: Int) -> String { String(format: "6A3F1C2E-7E57-4000-8000-%012d", index) }

    @Test func aBatchSealedAheadExportsVerifiesAndImportsAlike() async throws {
        let events = try Self.batch(600)
        try await withTemporaryDirectory { directory in
            // The system's secrets, as in use: a seeded source makes nothing ahead.
            let ledger = try Ledger(path: directory + "/a", options: .init(durable: false))
            let summary = try ledger.appendSynchronously(events)
            #expect(summary.head.seq == 600)
            // An export hands each salt out only once it has checked the fields against their commitment.
            let lines = try ErasedExportTests.lines(ledger)
            #expect(lines.count == 600)
            #expect(lines.filter { $0.contains(#""salt""#) }.count == 300)
            #expect(try await ledger.verify().isIntact)
            let copy = try Ledger(path: directory + "/b", options: .init(durable: false))
            try copy.appendSynchronously(lines.map { try #require(try EventJSON.decode(line: $0)) })
            #expect(try ErasedExportTests.lines(copy) == lines)
            #expect(try await copy.digest() == ledger.digest())
        }
    }

    /// The writing thread takes what was made ahead for every event with personal fields after the first chunk.
    @Test func theWriterTakesWhatWasMadeAhead() async throws {
        let events = try Self.batch(600)
        try await withLedger(mapSize: 8 << 20) { ledger in
            let taken = try ledger.writerCache.write(ledger.environment) { txn, cache in
                let store = LMDBStore(txn: txn, tables: ledger.tables, cache: cache)
                let request = GroupCommitter.Request(events: events, maxRejections: 1) { _ in }
                _ = try GroupCommitter.apply(request, store: store, head: try Ledger.head(txn.reader, ledger.tables), clock: { Timestamp(Date()) })
                try ledger.tables.keyRing?.syncNewKeys()
                return store.commitmentsTakenAhead
            }
            // Half the events have personal fields, 16 of them in the first chunk, which the writing thread makes.
            #expect(taken == 300 - 16)
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test func madeForTheFieldsTheRulesSee() throws {
        let events = try Self.batch(200)
        let ahead = try #require(CommitmentsAhead(events, secrets: .system))
        defer { ahead.cancel() }
        // The first chunk is left to the writing thread.
        #expect(ahead.made(at: 0) == nil)
        #expect(ahead.made(at: CommitmentsAhead.chunk - 1) == nil)
        for index in CommitmentsAhead.chunk..<200 {
            var shaped = events[index]
            try Projector<MemoryStore>.checkShape(&shaped, appending: true) { EventRejection($0, eventType: "") }
            let fields = PersonalFields(of: shaped)
            guard let made = ahead.made(at: index) else {
                #expect(fields.isEmpty, "event \(index)")
                continue
            }
            #expect(made.fields == fields.encoded(), "event \(index)")
            #expect(made.salt.count == SealedFields.saltSize)
            #expect(made.commitment == SealedFields.commitment(toEncoded: made.fields, salt: made.salt))
        }
        #expect(ahead.made(at: 200) == nil)
    }

    @Test func nothingAheadForSeededSecretsOrSmallBatches() throws {
        #expect(CommitmentsAhead(try Self.batch(200), secrets: .seeded("tests")) == nil)
        #expect(CommitmentsAhead(try Self.batch(CommitmentsAhead.fewest - 1), secrets: .system) == nil)
    }

    @Test func takenOnlyForTheFieldsItWasMadeFor() throws {
        let secrets = SecretSource.seeded("commitments-ahead")
        let dayKey = secrets.key(for: "day"), lookupKey = secrets.key(for: "lookup")
        let event = try Self.batch(1)[0]
        func prepared(_ ahead: CommitmentsAhead.Made?) throws -> [UInt8]? {
            try SealedRecord.prepare(
                event, seq: 7, recordedAt: SealedRecordTests.recordedAt, eventKey: dayKey,
                token: TokenHasher(tokenKey: DataKeys.tokenKey(lookupKey: lookupKey)).token, secrets: secrets, ahead: ahead
            ).salt
        }
        let fields = PersonalFields(of: event).encoded()
        let salt = [UInt8](repeating: 7, count: SealedFields.saltSize)
        let made = CommitmentsAhead.Made(fields: fields, salt: salt, commitment: SealedFields.commitment(toEncoded: fields, salt: salt))
        #expect(try prepared(made) == salt)
        var other = made
        other.fields[other.fields.count - 1] ^= 1
        let drawn = try prepared(other)
        #expect(drawn != salt)
        #expect(drawn == (try prepared(nil)))
    }
}
