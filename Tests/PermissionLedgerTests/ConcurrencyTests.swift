import Foundation
import PermissionLedger
import PermissionModel
import Testing

@Suite struct ConcurrencyTests {
    /// Permission changes with no recordedAt: the ledger's clock stamps them, so any order of batches is valid.
    static func batch(_ writer: Int, _ n: Int) throws -> [PermissionEvent] {
        try (0..<5).map { k in
            var event = try decodeEvent(JSONLine.permission(
                "w\(writer)-\(n)-\(k)", subject: "kid-\(writer)", SystemPermission.allCases[(n * 5 + k) % 18].rawValue,
                SystemPermission.State.allCases[k].rawValue, at: "09:00:00", recorded: "09:00:00"))
            event.recordedAt = nil
            return event
        }
    }

    @Test func concurrentWritersAndReadersSeeAConsistentLog() async throws {
        try await withLedger { ledger async throws in
            let writers = 8, batches = 10
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<writers {
                    group.addTask {
                        for n in 0..<batches {
                            let summary = try await ledger.append(try Self.batch(w, n))
                            #expect(summary.appended == 5)
                        }
                    }
                }
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<25 {
                            // Every view is a snapshot: its head is a whole number of batches, and its export agrees with it.
                            let (head, lines) = try ledger.read { view in
                                var count: UInt64 = 0
                                try view.forEachEvent(after: 0, through: view.head.seq) { _ in count += 1 }
                                return (view.head.seq, count)
                            }
                            #expect(head % 5 == 0)
                            #expect(lines == head)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try ledger.head().seq == UInt64(writers * batches * 5))
            #expect(try await ledger.verify().isIntact)
            #expect(try ledger.read { try $0.subjects() }.count == writers)
            // The clock-stamped recordedAt never decreases along the log.
            var previous: Timestamp?
            for event in try storedEvents(ledger) {
                if let previous { #expect(event.recordedAt >= previous) }
                previous = event.recordedAt
            }
        }
    }

    @Test func appendSynchronouslyFromManyThreads() async throws {
        try await withLedger { ledger async throws in
            DispatchQueue.concurrentPerform(iterations: 6) { w in
                for n in 0..<5 {
                    #expect(throws: Never.self) { _ = try ledger.appendSynchronously(try Self.batch(w, n)) }
                }
            }
            #expect(try ledger.head().seq == 6 * 5 * 5)
            #expect(try await ledger.verify().isIntact)
        }
    }
}
