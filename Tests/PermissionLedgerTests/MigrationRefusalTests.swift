import Foundation
import LMDB
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// `migrate` of format 1 logs: events stored before today's text rules are carried over as they were accepted; an
/// event the rules refuse is one error naming its seq, and nothing is left behind of the new ledger.
@Suite(.timeLimit(.minutes(10)))
struct MigrationRefusalTests {
    /// A format 1 ledger as far as its primary data goes (the format version and the log), holding `events`.
    static func formatOneLedger(at path: String, _ events: [PermissionEvent]) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
        defer { try? environment.close() }
        let meta = try environment.openDatabase("meta", create: true)
        let log = try environment.openDatabase("events", create: true)
        try environment.write { txn in
            try txn.put(meta, key: Array("format".utf8), value: [1])
            var previous = ChainHash.genesis
            for (index, event) in events.enumerated() {
                let record = EventRecord.encode(event, recordedAt: event.occurredAt)
                let hash = chainHash(previous: previous, record: record)
                try txn.put(log, key: Keys.seq(UInt64(index + 1)), value: hash.bytes + record)
                previous = hash
            }
        }
    }

    @Test func anEventTodaysRulesRefuseStopsTheMigrationAndLeavesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let at = try Timestamp(rfc3339: "2026-11-20T09:00:00Z")
            let handle = try CommunicationHandle(value: "+14155550101", kind: .phoneNumber)
            let events = [
                PermissionEvent(id: "o1", subject: "kid-ava", occurredAt: at, payload: .handlesObserved(checked: [handle], known: [handle])),
                // An answer to a question never asked: no log the rules kept holds one.
                PermissionEvent(id: "a1", subject: "kid-ava", occurredAt: at, payload: .questionAnswered(questionID: UUID(), choiceID: "approve", via: .messages)),
            ]
            try Self.formatOneLedger(at: directory + "/old", events)
            var options = Ledger.Options.seeded("migration refused", durable: false)
            options.keyFile = directory + "/new.key"

            await #expect {
                try await Ledger.migrate(from: directory + "/old", to: directory + "/new", options: options)
            } throws: { error in
                guard let refused = error as? MigrationRefused else { return false }
                return refused.rejections.map(\.seq) == [2] && refused.description.hasPrefix("\(directory)/old: seq 2: ")
                    && refused.description.hasSuffix("; today's rules refuse it, and nothing was migrated")
                    && !refused.description.contains("\n")
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/new"), "the new directory is removed")
            #expect(!FileManager.default.fileExists(atPath: directory + "/new.key"), "the new key file is removed")

            // Into a directory that was there, only what the migration made goes; the directory stays.
            try FileManager.default.createDirectory(atPath: directory + "/kept", withIntermediateDirectories: false)
            await #expect(throws: MigrationRefused.self) {
                try await Ledger.migrate(from: directory + "/old", to: directory + "/kept", options: options)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/kept") == [])
            #expect(!FileManager.default.fileExists(atPath: directory + "/new.key"))
        }
    }

    @Test func eventsStoredBeforeTheTextRulesAreCarriedOverAsTheyWereAccepted() async throws {
        try await withTemporaryDirectory { directory in
            let at = try Timestamp(rfc3339: "2026-11-20T09:00:00Z")
            let handle = try CommunicationHandle(value: "+14155550101", kind: .phoneNumber)
            // A bidi override (category Cf) in a subject: accepted before the text rules, refused by them for new events.
            let subject = "kid-\u{202E}neb"
            try Self.formatOneLedger(at: directory + "/old", [
                PermissionEvent(id: "o1", subject: subject, occurredAt: at, payload: .handlesObserved(checked: [handle], known: [handle])),
            ])
            let oldHead = try await Ledger.migrate(from: directory + "/old", to: directory + "/new", options: .seeded("migration kept", durable: false))
            #expect(oldHead.seq == 1)
            let ledger = try Ledger(path: directory + "/new", options: .seeded("migration kept", durable: false))
            #expect(try ledger.read { try $0.subjects() } == [subject])
            #expect(try ledger.read { try $0.knownHandles(subject: subject) }.map(\.handle) == [handle])
            // A new event of that subject meets today's rules.
            await #expect(throws: AppendRejected.self) {
                try await ledger.append([PermissionEvent(id: "o2", subject: subject, occurredAt: at, payload: .handlesObserved(checked: [handle], known: []))])
            }
        }
    }
}
