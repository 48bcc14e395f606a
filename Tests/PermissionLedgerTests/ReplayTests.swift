import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct ReplayTests {
    // MARK: Rebuilding projections

    @Test(arguments: Fixtures.valid)
    func keptProjectionsEqualARebuild(name: String) async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture(name)
            let head = try ledger.head()
            let report = try await ledger.verify()
            #expect(report.isIntact, "\(report.problem ?? "")")
            #expect(report.damagedSeq == nil)
            #expect(report.events == head.seq)
            #expect(report.head == head.hash)

            let digest = try await ledger.digest()
            let state = try ledger.read(asOf: .seq(head.seq)) { try $0.canonicalState() }
            let middle = try await ledger.digest(asOf: .seq(head.seq / 2))
            let export = try ledger.exportText()
            try await ledger.rebuildProjections()
            #expect(try await ledger.digest() == digest)
            #expect(try ledger.read(asOf: .seq(head.seq)) { try $0.canonicalState() } == state)
            #expect(try await ledger.digest(asOf: .seq(head.seq / 2)) == middle, "history survives a rebuild")
            #expect(try ledger.exportText() == export)
            #expect(try ledger.head() == head)
            #expect(try await ledger.verify().isIntact)
        }
    }

    // MARK: Determinism

    @Test(arguments: Fixtures.valid)
    func theSameEventsGiveTheSameLedger(name: String) async throws {
        try await withTwoLedgers { a, b async throws in
            try await a.importFixture(name)
            // The second ledger takes the events one at a time.
            for event in try Fixtures.fixture(name).events { _ = try await b.append([event]) }
            #expect(try a.head() == b.head())
            #expect(try await a.digest() == b.digest())
            #expect(try a.exportText() == b.exportText())
        }
    }

    @Test(arguments: Fixtures.valid)
    func exportImportedIntoAnEmptyLedgerIsIdentical(name: String) async throws {
        try await withTwoLedgers { original, copy async throws in
            try await original.importFixture(name)
            let export = try original.exportText()
            let events = try Fixture(jsonLines: export, name: "export").events
            #expect(events.allSatisfy { $0.seq != nil && $0.hash != nil && $0.recordedAt != nil })
            let summary = try await copy.append(events)
            #expect(summary.appended == events.count, "seq and hash check themselves")
            #expect(try copy.exportText() == export)
            #expect(try copy.head() == original.head())
            #expect(try await copy.digest() == original.digest())
            // Re-importing the export into the same ledger is all duplicates.
            let again = try await copy.append(events)
            #expect(again.appended == 0)
            #expect(again.duplicates == events.count)
        }
    }

    @Test func anExportAfterASeqContinuesAnotherLedger() async throws {
        try await withTwoLedgers { original, copy async throws in
            try await original.importFixture("late-answer.jsonl")
            let firstPart = try original.exportText().split(separator: "\n").prefix(3).map { try decodeEvent(String($0)) }
            _ = try await copy.append(firstPart)
            let rest = try original.exportText(after: 3)
            #expect(rest.hasPrefix("{\"seq\":4,"))
            _ = try await copy.append(try rest.split(separator: "\n").map { try decodeEvent(String($0)) })
            #expect(try copy.exportText() == original.exportText())
        }
    }

    /// Ways to tamper with one line of an export, and what the rejection must mention.
    static let tamperings: [(String, String)] = [
        ("hash", "hash"),       // one hex digit of the hash changed
        ("content", "hash"),    // the event changed, its hash kept
        ("seq", "seq"),         // the seq changed
    ]

    @Test(arguments: tamperings)
    func aTamperedExportIsRejected(what: String, mention: String) async throws {
        try await withTwoLedgers { original, copy async throws in
            try await original.importFixture("permissions.jsonl")
            var lines = try original.exportText().split(separator: "\n").map(String.init)
            let target = 6
            switch what {
            case "hash":
                let range = try #require(lines[target].range(of: ",\"hash\":\""))
                let at = lines[target].index(range.upperBound, offsetBy: 10)
                let digit = lines[target][at]
                lines[target].replaceSubrange(at...at, with: digit == "0" ? "1" : "0")
            case "content":
                // camera doNotAskAgain becomes camera authorized.
                let tampered = lines[target].replacingOccurrences(of: "\"state\":\"doNotAskAgain\"", with: "\"state\":\"authorized\"")
                #expect(tampered != lines[target])
                lines[target] = tampered
            default:
                lines[target] = lines[target].replacingOccurrences(of: "{\"seq\":\(target + 1),", with: "{\"seq\":\(target + 2),")
            }
            let events = try lines.map { try decodeEvent($0) }
            let rejected = await rejections { _ = try await copy.append(events) }
            #expect(rejected.first?.index == target)
            #expect(rejected.first?.rejection.reason.contains(mention) == true, "\(String(describing: rejected.first?.rejection))")
            #expect(try copy.head() == .empty)
            #expect(try copy.exportText().isEmpty)
        }
    }

    @Test(arguments: Fixtures.valid)
    func replayInMemoryReachesTheSameHead(name: String) async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture(name)
            let replay = try ledger.replayInMemory()
            let head = try ledger.head()
            #expect(replay.head == head.hash)
            #expect(replay.events == head.seq)
            #expect(replay.questions == (try ledger.read { try $0.questions() }.count))
        }
    }

    @Test func replayOfAnEmptyLedger() async throws {
        try await withLedger { ledger async throws in
            let replay = try ledger.replayInMemory()
            #expect(replay.events == 0)
            #expect(replay.head == ChainHash.genesis)
            #expect(ChainHash.genesis.description == String(repeating: "0", count: 64))
            #expect(try await ledger.verify().isIntact)
            #expect(try await ledger.verify().events == 0)
        }
    }

    @Test func theChainHashDependsOnEveryEventBefore() async throws {
        // The same last event after different histories gets different hashes.
        func history(firstRecordedAfter delay: Duration) throws -> [PermissionEvent] {
            var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T09:00:00Z"), recordingDelay: delay)
            s.permission(.camera, .askAgain)
            s.recordingDelay = .seconds(1)
            s.advance(by: .seconds(3600))
            s.permission(.camera, .denied)
            return s.events
        }
        let (first, second) = (try history(firstRecordedAfter: .seconds(1)), try history(firstRecordedAfter: .seconds(2)))
        #expect(first.last == second.last)
        try await withTwoLedgers { a, b async throws in
            _ = try await a.append(first)
            _ = try await b.append(second)
            #expect(try a.head().seq == b.head().seq)
            #expect(try a.head().hash != b.head().hash)
        }
    }

    @Test
    func anExtremeButAcceptedTimeSurvivesExportAndImport() async throws {
        try await withTwoLedgers { original, copy async throws in
            let line = #"{"type":"permission.changed","id":"p1","subject":"kid-ava","occurredAt":"9999-12-31T23:30:00-01:00","recordedAt":"2026-11-20T09:00:00Z","permission":"camera","state":"denied"}"#
            guard let event = try? EventJSON.decode(line: line) else { return }  // rejecting it is fine too
            _ = try await original.append([event])
            let export = try original.exportText()
            _ = try await copy.append(try export.split(separator: "\n").map { try decodeEvent(String($0)) })
            #expect(try copy.exportText() == export)
            #expect(try copy.head() == original.head())
        }
    }

    @Test func exportAfterTheHeadIsEmpty() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            #expect(try ledger.exportText(after: 2).isEmpty)
            #expect(try ledger.exportText(after: 1_000).isEmpty)
            #expect(try ledger.exportText(after: 1).hasPrefix("{\"seq\":2,"))
        }
    }

    @Test
    func exportAfterTheLargestSeqIsEmpty() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            #expect(try ledger.exportText(after: .max).isEmpty)
        }
    }
}
