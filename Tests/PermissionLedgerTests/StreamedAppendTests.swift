import Foundation
import LMDB
import PermissionLedger
import PermissionModel
import Testing

/// `appendSynchronously(streaming:…)`: events pulled one at a time, applied in one transaction, all or nothing.
@Suite struct StreamedAppendTests {
    static let q1 = QID.q1

    /// A stream over `events` that counts how many were pulled.
    final class Stream {
        private var iterator: IndexingIterator<[PermissionEvent]>
        private(set) var pulled = 0
        /// Thrown instead of giving the event at this index (0-based), when set.
        var failAt: Int?

        struct Failure: Error, Equatable { var index: Int }

        init(_ events: [PermissionEvent]) { iterator = events.makeIterator() }

        func next() throws -> PermissionEvent? {
            if let failAt, pulled == failAt { throw Failure(index: pulled) }
            guard let event = iterator.next() else { return nil }
            pulled += 1
            return event
        }
    }

    /// Six events, four of them rejected (indices 0, 2, 4, 5), as in `AcceptanceRuleTests`.
    static func badBatch() throws -> [PermissionEvent] {
        try [
            JSONLine.answered("e0", question: q1, choice: "approve", at: "08:59:00", recorded: "08:59:01"),  // unknown question
            JSONLine.asked("e1", question: q1, at: "09:00:00", recorded: "09:00:01"),
            JSONLine.asked("e2", question: q1, at: "09:01:00", recorded: "09:01:01"),  // question id reused
            JSONLine.permission("e3", "camera", "authorized", at: "09:02:00", recorded: "09:02:01"),
            JSONLine.permission("e4", "camera", "denied", at: "09:03:00", recorded: "09:00:00"),  // recordedAt decreases
            JSONLine.answered("e5", question: q1, choice: "nope", at: "09:04:00", recorded: "09:04:01"),  // unknown choice
        ].map { try decodeEvent($0) }
    }

    @Test func appendsWhatABatchAppends() async throws {
        try await withTwoLedgers { streamed, batched async throws in
            let events = try Fixtures.fixture("family-day.jsonl").events
            let batch = try batched.appendSynchronously(events)

            let stream = Stream(events)
            var progress: [Int] = []
            let summary = try streamed.appendSynchronously(streaming: stream.next, progress: { progress.append($0) })
            #expect(summary.appended == batch.appended)
            #expect(summary.duplicates == batch.duplicates)
            #expect(summary.events == events.count)
            #expect(summary.head == batch.head)
            #expect(stream.pulled == events.count)
            #expect(progress.isEmpty, "fewer than 10,000 events")
            #expect(try streamed.exportText() == batched.exportText())
            #expect(try await streamed.digest() == batched.digest())
            #expect(try await streamed.verify().isIntact)

            // The same events again are all duplicates: nothing is appended and the head stays.
            let again = try streamed.appendSynchronously(streaming: Stream(events).next)
            #expect(again.appended == 0)
            #expect(again.duplicates == events.count)
            #expect(again.head == summary.head)
        }
    }

    @Test func countsDuplicates() async throws {
        try await withLedger { ledger async throws in
            // Redelivered events: 3 appended, 3 duplicates.
            let summary = try ledger.appendSynchronously(streaming: Stream(try Fixtures.fixture("duplicate-response.jsonl").events).next)
            #expect(summary.appended == 3)
            #expect(summary.duplicates == 3)
            #expect(summary.events == 6)
            #expect(summary.head.seq == 3)
        }
    }

    @Test func anEmptyStreamAppendsNothing() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            let head = try ledger.head()
            let summary = try ledger.appendSynchronously(streaming: { nil })
            #expect(summary.appended == 0)
            #expect(summary.duplicates == 0)
            #expect(summary.head == head)
        }
    }

    @Test func rejectionsAreReportedAsTheyArePulledAndNothingIsWritten() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("permissions.jsonl")
            let export = try ledger.exportText()
            let head = try ledger.head()

            let stream = Stream(try Self.badBatch())
            var reported: [(index: Int, reason: String, pulled: Int)] = []
            let rejected = await rejections {
                _ = try ledger.appendSynchronously(streaming: stream.next, onRejection: { index, rejection in
                    // Called before the next event is pulled: the offending event is the last one pulled.
                    reported.append((index, rejection.description, stream.pulled))
                })
            }
            #expect(reported.map(\.index) == [0, 2, 4, 5])
            #expect(reported.map(\.pulled) == [1, 3, 5, 6])
            #expect(rejected.map(\.index) == [0, 2, 4, 5])
            #expect(rejected.map(\.rejection.description) == reported.map(\.reason))
            // The same as validating the batch.
            #expect(await rejections { _ = try ledger.validate(try Self.badBatch()) }.map(\.index) == [0, 2, 4, 5])
            #expect(stream.pulled == 6, "the events after a rejection are still checked")
            #expect(try ledger.exportText() == export)
            #expect(try ledger.head() == head)
        }
    }

    @Test func theStreamStopsAtMaxRejections() async throws {
        try await withLedger { ledger async throws in
            let stream = Stream(try Self.badBatch())
            var reported: [Int] = []
            let rejected = await rejections {
                _ = try ledger.appendSynchronously(streaming: stream.next, maxRejections: 2, onRejection: { index, _ in reported.append(index) })
            }
            #expect(rejected.map(\.index) == [0, 2])
            #expect(reported == [0, 2])
            #expect(stream.pulled == 3, "nothing is pulled after the last rejection reported")
            #expect(try ledger.head() == .empty)
        }
    }

    @Test func whatTheStreamThrowsIsRethrownAndNothingIsWritten() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("permissions.jsonl")
            let export = try ledger.exportText()
            let head = try ledger.head()

            // Good events, then the stream fails.
            let events = Self.permissionEvents(count: 50)
            let stream = Stream(events)
            stream.failAt = events.count - 1
            #expect(throws: Stream.Failure(index: events.count - 1)) {
                try ledger.appendSynchronously(streaming: stream.next)
            }
            #expect(try ledger.exportText() == export)
            #expect(try ledger.head() == head)

            // Also after a rejection: the caller's error wins, as the caller knows more.
            let bad = Stream(try Self.badBatch())
            bad.failAt = 3
            var reported: [Int] = []
            #expect(throws: Stream.Failure(index: 3)) {
                try ledger.appendSynchronously(streaming: bad.next, onRejection: { index, _ in reported.append(index) })
            }
            #expect(reported == [0, 2])
            #expect(try ledger.exportText() == export)

            // The ledger is still writable, and the write lock was let go.
            let summary = try ledger.appendSynchronously(streaming: Stream(events).next)
            #expect(summary.appended == events.count)
            #expect(try await ledger.append(events).duplicates == events.count)
        }
    }

    @Test func aDurableStreamedAppendIsThereAfterReopening() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let events = try Fixtures.fixture("family-day.jsonl").events
            do {
                let ledger = try Ledger(path: path)
                let summary = try ledger.appendSynchronously(streaming: Stream(events).next)
                #expect(summary.head.seq == UInt64(events.count))
                #expect(ledger.writerStatistics.requests == 0, "not through the writer thread")
            }
            let reopened = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try reopened.head().seq == UInt64(events.count))
            #expect(try await reopened.verify().isIntact)
        }
    }

    @Test func aDurableStreamedAppendWakesSubscribers() async throws {
        try await withLedger(durable: true) { ledger async throws in
            let events = try Fixtures.fixture("family-day.jsonl").events
            // A long poll interval: only the append's own wake-up brings the events in time.
            let subscription = Task {
                var seen = 0
                for try await _ in ledger.events(after: 0, pollInterval: .seconds(3600)) {
                    seen += 1
                    if seen == events.count { break }
                }
                return seen
            }
            try await Task.sleep(for: .milliseconds(100))
            try ledger.appendSynchronously(streaming: Stream(events).next)
            #expect(try await subscription.value == events.count)
        }
    }

    /// Many events through a map that starts at 1 MiB: the room is made before the stream starts, since
    /// the map cannot grow during its transaction.
    @Test func theMapIsGrownBeforeTheStreamStarts() async throws {
        try await withLedger(mapSize: 1 << 20) { ledger async throws in
            let events = Self.permissionEvents(count: 30_000)
            var progress: [Int] = []
            let summary = try ledger.appendSynchronously(streaming: Stream(events).next, reservingBytes: 256 << 20, progress: { progress.append($0) })
            #expect(summary.appended == events.count)
            #expect(progress == [10_000, 20_000])
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// By default the room made is what the ledger's file system can still take, so that any stream the
    /// disk can hold fits, whatever the size of its source: the map (whose size LMDB keeps in the meta
    /// page) is grown to about the disk's free space, far beyond the 1 GiB least.
    @Test func byDefaultTheRoomIsWhatTheFileSystemCanTake() async throws {
        try await withLedger(mapSize: 1 << 20) { ledger async throws in
            let events = Self.permissionEvents(count: 10)
            #expect(try ledger.appendSynchronously(streaming: Stream(events).next).appended == events.count)
            var info = statvfs()
            try #require(statvfs(ledger.path, &info) == 0)
            let available = Int(info.f_bavail) * Int(info.f_frsize)
            let mapSize = try #require(try MetaPages(dataFile: ledger.path + "/data.mdb").newest).mapSize
            // Half of what is free now: other tests write to the same disk meanwhile.
            #expect(Int(mapSize) >= min(1 << 40, max(Ledger.defaultStreamReserve, available / 2)))
        }
    }

    /// Without room reserved, a full map cannot be grown part-way: the append fails, nothing is written,
    /// the stream is not pulled again, and the ledger stays usable.
    @Test func aMapThatFillsDuringTheStreamFailsTheAppendWithNothingWritten() async throws {
        try await withLedger(mapSize: 1 << 20) { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            let head = try ledger.head()
            let events = Self.permissionEvents(count: 30_000, from: 1)
            let stream = Stream(events)
            let error = ledgerError { _ = try ledger.appendSynchronously(streaming: stream.next, reservingBytes: 0) }
            #expect(error?.kind == .storage)
            #expect(error?.message.contains("nothing was written") == true, "\(String(describing: error))")
            #expect(stream.pulled < events.count, "the map filled part-way")
            #expect(try ledger.head() == head)
            // Reserving enough, the same events go in.
            #expect(try ledger.appendSynchronously(streaming: Stream(events).next, reservingBytes: 256 << 20).appended == events.count)
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// More questions, subjects and handle changes than a streamed append's caches hold (made small here): the
    /// caches are emptied on the way, which must change nothing. Every question is answered long after it was
    /// asked. Every secret is derived from a seed so that the two ledgers' exports compare.
    @Test func boundedCachesGiveTheSameLedgerAsABatch() async throws {
        var options = Ledger.Options.seeded("two ledgers", mapSize: 1 << 20, durable: false)
        options.streamCacheLimit = 256
        try await withTwoLedgers(options) { streamed, batched async throws in
            let count = 2_000
            var events: [PermissionEvent] = []
            func question(_ n: Int) -> String { String(format: "6A3F1C2E-5E00-4000-8000-%012X", n) }
            for n in 0..<count {
                let second = String(format: "%02d:%02d:%02d", 9 + n / 3600, (n / 60) % 60, n % 60)
                events.append(try decodeEvent(JSONLine.asked("a\(n)", question: question(n), subject: "kid-\(n)", at: second, recorded: second,
                                                             people: [("friend-\(n % 7)", "custom")])))
            }
            for n in 0..<count {
                let second = String(format: "%02d:%02d:%02d", 15 + n / 3600, (n / 60) % 60, n % 60)
                if n.isMultiple(of: 20) {
                    // One subject's handles change all along, in many versions of the same few handles.
                    events.append(try decodeEvent(JSONLine.observed(
                        "c\(n)", subject: "kid-busy", checked: [("friend-\(n % 7)", "custom")],
                        known: n.isMultiple(of: 40) ? [("friend-\(n % 7)", "custom")] : [], at: second, recorded: second)))
                }
                events.append(try decodeEvent(n.isMultiple(of: 2)
                    ? JSONLine.answered("b\(n)", question: question(n), choice: "approve", subject: "kid-\(n)", at: second, recorded: second)
                    : JSONLine.observed("b\(n)", subject: "kid-\(n)", checked: [("friend-\(n % 7)", "custom"), ("other", "custom")],
                                        known: [("other", "custom")], at: second, recorded: second)))
            }
            _ = try batched.appendSynchronously(events)
            let summary = try streamed.appendSynchronously(streaming: Stream(events).next)
            #expect(summary.appended == events.count)
            #expect(try streamed.exportText() == batched.exportText())
            #expect(try await streamed.digest() == batched.digest())
            #expect(try await streamed.verify().isIntact)
        }
    }

    /// `count` permission changes, one a second from 2026-11-21T00:00:00Z (after every fixture), with ids
    /// `p<from>`, `p<from + 1>`, …
    static func permissionEvents(count: Int, from first: Int = 0) -> [PermissionEvent] {
        let start = Timestamp(microseconds: 1_795_219_200_000_000)  // 2026-11-21T00:00:00Z
        return (first..<first + count).map { n in
            let at = Timestamp(microseconds: start.microseconds + Int64(n) * 1_000_000)
            return PermissionEvent(
                id: "p\(n)", subject: "kid-\(n % 5)", occurredAt: at, recordedAt: at,
                payload: .permissionChanged(SystemPermission.allCases[n % SystemPermission.allCases.count], state: .authorized, cause: nil))
        }
    }
}
