import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// `digest` and `backup` look at their task's cancellation as they go (`Cancellation`, which `offPool` cancels
/// when the task is): given one already cancelled, they stop at their first look, and a backup leaves nothing.
@Suite struct CancelledWorkTests {
    static func cancelled() -> Cancellation {
        let cancellation = Cancellation()
        cancellation.cancel()
        return cancellation
    }

    @Test("digest stops with CancellationError at its first question and at its first subject")
    func digestStops() async throws {
        try await withLedger { ledger async throws in
            try OffPoolWorkTests.fill(ledger, events: 100)
            #expect(throws: CancellationError.self) { _ = try ledger.digest(asOf: nil, cancellation: Self.cancelled()) }
            try await ledger.importFixture("family-day.jsonl")
            #expect(throws: CancellationError.self) { _ = try ledger.digest(asOf: nil, cancellation: Self.cancelled()) }
            #expect(try ledger.digest(asOf: nil, cancellation: Cancellation()) == (try ledger.digest(asOf: nil, cancellation: nil)))
        }
    }

    @Test("backup stops with CancellationError before it copies, and leaves no directory, partial or not")
    func backupStops() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("decline.jsonl")
            #expect(throws: CancellationError.self) { _ = try ledger.backup(to: directory + "/copy", cancellation: Self.cancelled()) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["ledger"])
            #expect(try ledger.backup(to: directory + "/copy", cancellation: Cancellation()).seq == (try ledger.head()).seq)
        }
    }
}
