import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// docs/spec/PRIVACY.md, `retain`: run from a timer, each run erases what is still readable before its cut.
@Suite(.timeLimit(.minutes(10)))
struct RetentionTests {
    static let alpha = JSONLine.observed("alpha", checked: [("alpha", "custom")], known: [("alpha", "custom")], at: "08:00:00", recorded: "08:00:00")
    static let beta = JSONLine.observed("beta", checked: [("beta", "custom")], known: [("beta", "custom")], at: "12:00:00", recorded: "12:00:00")

    /// A daily job's later cut erases events an earlier cut left readable: the export of both erasures imports
    /// into an empty ledger as the same log, although the later erasure's events come before the earlier one.
    @Test func twoRetentionRunsExportAndImportAsTheyWere() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.append(json: Self.alpha, Self.beta)
            #expect(try await ledger.retain(before: Timestamp(rfc3339: "2026-11-20T10:00:00Z")).events == 1)
            #expect(try await ledger.retain(before: Timestamp(rfc3339: "2026-11-20T13:00:00Z")).events == 1)
            let lines = try ErasedExportTests.lines(ledger)
            let digest = try await ledger.digest()
            await ledger.close()
            #expect(lines.count == 4)
            let copy = try await ErasedExportTests.roundTrip(lines, at: directory + "/copy")
            #expect(copy.export == lines)
            #expect(copy.digest == digest)
        }
    }

    /// A run whose task is cancelled stops between two subjects: what it erased stays, and the next run erases the
    /// rest.
    @Test func aCancelledRunStopsAndTheNextCarriesOn() async throws {
        /// Cancels the run's task when the clock is read once it is set: when the run first asks for the time.
        final class CancelOnClock: @unchecked Sendable {
            let lock = NSLock()
            var run: Task<Ledger.RetentionSummary, any Error>?
            func read() -> Timestamp {
                lock.withLock { run?.cancel() }
                return Timestamp(Date())
            }
        }
        let trigger = CancelOnClock()
        try await withTemporaryDirectory { directory in
            var options = Ledger.Options(durable: false)
            options.clock = { trigger.read() }
            let ledger = try Ledger(path: directory + "/ledger", options: options)
            let subjects = 20
            try await ledger.append((0..<subjects).map { n in
                PermissionEvent(id: "seen-\(n)", subject: String(format: "kid-%02d", n), occurredAt: GroupCommitTests.base,
                                payload: .handlesObserved(checked: [try! CommunicationHandle(value: "friend-\(n)", kind: .custom)], known: []))
            })
            let cut = Timestamp(Date().addingTimeInterval(3_600))
            let run = trigger.lock.withLock {
                let run = Task { try await ledger.retain(before: cut) }
                trigger.run = run
                return run
            }
            await #expect(throws: CancellationError.self) { _ = try await run.value }
            let erased = Int(try ledger.head().seq) - subjects
            #expect(erased < 2, "it stopped at the next subject")
            trigger.lock.withLock { trigger.run = nil }
            let rest = try await ledger.retain(before: cut)
            #expect(rest.erasures.count == subjects - erased)
        }
    }

    /// A run with the cut of an earlier run erases what was recorded before that cut since, and, run once more,
    /// nothing: the same clock, so that only the events the erasure covers tell the runs apart.
    @Test func aRunWithAnEarlierRunsCutErasesWhatWasRecordedBeforeItSince() async throws {
        try await withTemporaryDirectory { directory in
            var options = Ledger.Options.seeded()
            // Between the two events, before the cut.
            let now = try Timestamp(rfc3339: "2026-11-20T10:00:00Z")
            options.clock = { now }
            let ledger = try Ledger(path: directory + "/ledger", options: options)
            let cut = try Timestamp(rfc3339: "2026-11-21T00:00:00Z")
            try await ledger.append(json: Self.alpha)
            #expect(try await ledger.retain(before: cut).events == 1)
            try await ledger.append(json: Self.beta)
            #expect(try ledger.readableFields(subject: "kid-ava", before: cut) == [3: 2])
            let second = try await ledger.retain(before: cut)
            #expect(second.events == 1 && second.erasures.count == 1, "\(second)")
            #expect(try ledger.readableFields(subject: "kid-ava", before: cut).isEmpty)
            #expect(try await ledger.retain(before: cut).erasures.isEmpty)
            #expect(try ledger.head().seq == 4)
        }
    }
}
