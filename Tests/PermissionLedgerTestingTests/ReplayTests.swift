import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct ReplayedLedgerTests {
    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    @Test func theScopedReplayRemovesItsDirectoryAfterwards() async throws {
        let fixture = try Fixture(contentsOf: Fixtures.url("time-limited.jsonl"))
        let directory = try await fixture.replay { replayed async throws in
            await Task.yield()
            #expect(Self.exists(replayed.directory))
            #expect(Self.exists(replayed.directory.appendingPathComponent("ledger/data.mdb")))
            #expect(try replayed.head.seq == 7)
            return replayed.directory
        }
        #expect(!Self.exists(directory))
    }

    @Test func theSynchronousReplayRemovesItsDirectoryAfterwards() throws {
        let fixture = try Fixture(contentsOf: Fixtures.url("approval-messages.jsonl"))
        let directory = try fixture.replay { replayed in
            #expect(Self.exists(replayed.directory))
            return replayed.directory
        }
        #expect(!Self.exists(directory))
    }

    struct Boom: Error {}

    @Test func theDirectoryIsRemovedWhenTheBodyThrows() async throws {
        let fixture = try Fixture(contentsOf: Fixtures.url("approval-messages.jsonl"))
        var directory: URL?
        await #expect(throws: Boom.self) {
            try await fixture.replay { replayed async throws in
                directory = replayed.directory
                throw Boom()
            }
        }
        let seen = try #require(directory)
        #expect(!Self.exists(seen))
    }

    @Test func anUnscopedReplayIsRemovedWhenReleased() throws {
        var replayed: ReplayedLedger? = try ReplayedLedger(Fixture(contentsOf: Fixtures.url("decline.jsonl")))
        let directory = try #require(replayed?.directory)
        #expect(Self.exists(directory))
        replayed = nil
        #expect(!Self.exists(directory))
    }

    @Test func aRejectedEventNamesItsLine() throws {
        let fixture = try Fixture(contentsOf: Fixtures.directory.appendingPathComponent("invalid/answer-after-cancel.jsonl"))
        let error = try #require(throws: FixtureError.self) { try ReplayedLedger(fixture) }
        #expect(error.problems.map(\.line) == [6])
        #expect(error.description == "answer-after-cancel.jsonl:6: question.answered: question 6A3F1C2E-BAD0-4000-8000-000000000001 was canceled before it was sent, so it cannot be answered")
    }

    @Test func exposesTheHeadDigestAndExport() async throws {
        let fixture = try Fixture(contentsOf: Fixtures.url("duplicate-response.jsonl"))
        try await fixture.replay { replayed async throws in
            #expect(replayed.summary.appended == 3)
            #expect(replayed.summary.duplicates == 3)
            let head = try replayed.head
            #expect(head.seq == 3)
            #expect(try replayed.digest() == replayed.digest(asOf: .seq(3)))
            let export = try replayed.exportText()
            #expect(export.split(separator: "\n").count == 3)
            #expect(export.hasSuffix("\"hash\":\"\(head.hash)\"}\n"))
            #expect(try replayed.storedEvents().map(\.seq) == [1, 2, 3])
            // The export replays to the same state.
            try await Fixture(jsonLines: export).replay { again async throws in
                #expect(try again.digest() == replayed.digest())
                #expect(try again.head == head)
            }
        }
    }

    @Test func aFixedClockMakesEventsWithoutRecordedAtDeterministic() throws {
        let text = """
            {"type":"permission.changed","id":"p-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"authorized"}
            """
        let clock: @Sendable () -> Timestamp = { time("2026-11-20T09:00:05Z") }
        let first = try Fixture(jsonLines: text).replay(clock: clock) { try $0.digest() }
        let second = try Fixture(jsonLines: text).replay(clock: clock) { replayed throws in
            #expect(try replayed.storedEvents().first?.recordedAt == time("2026-11-20T09:00:05Z"))
            return try replayed.digest()
        }
        #expect(first == second)
    }
}
