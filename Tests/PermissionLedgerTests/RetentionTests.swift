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
