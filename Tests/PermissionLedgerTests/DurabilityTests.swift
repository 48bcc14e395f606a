import Foundation
import LMDB
import PermissionLedger
import PermissionModel
import Testing

@Suite struct DurabilityTests {
    struct Snapshot: Equatable {
        var export: String
        var digest: String
        var head: LogHead

        init(_ ledger: Ledger) throws {
            export = try ledger.exportText()
            digest = try ledger.digest()
            head = try ledger.head()
        }
    }

    @Test func eventsSurviveReopening() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let before: Snapshot
            do {
                let ledger = try Ledger(path: path)  // durable, the default
                try await ledger.importFixture("family-day.jsonl")
                try await ledger.append(json: JSONLine.permission("extra-1", subject: "kid-eve", "camera", "authorized", at: "20:00:00", recorded: "20:00:01"))
                before = try Snapshot(ledger)
                #expect(before.head.seq == 1201)
            }
            do {
                let reopened = try Ledger(path: path)
                #expect(try Snapshot(reopened) == before)
                #expect(try await reopened.verify().isIntact)
            }
            do {
                let readOnly = try Ledger(path: path, options: .init(readOnly: true))
                #expect(try Snapshot(readOnly) == before)
                #expect(try readOnly.read(asOf: .seq(1200)) { try $0.knownHandles(subject: "kid-dev") }.count == 8)
            }
        }
    }

    /// A ledger is closed when its last reference goes, on the thread that lets it go: its writer and
    /// flusher threads drop what they hold of it before it is released, so it can be opened again at once.
    @Test("a released ledger can be opened again at once, with durable appends on its writer and flusher threads")
    func aReleasedLedgerIsClosedAtOnce() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            for round in 1...40 {
                do {
                    let ledger = try Ledger(path: path, options: .init(durable: true))
                    try await ledger.append(json: JSONLine.permission("p-\(round)", subject: "kid-eve", "camera", "authorized", at: "20:00:00", recorded: "20:00:00"))
                }
                // Not a Ledger: an environment of its own, which refuses a directory still open in this process.
                let environment = try Environment(path: path, options: .init(maxDatabases: 32, readOnly: true))
                _ = environment
            }
            let ledger = try Ledger(path: path)
            #expect(try ledger.head().seq == 40)
        }
    }

    /// Work that runs on a thread of its own (verify, digest, export) lets the ledger go before its caller
    /// resumes: a caller that drops the ledger right afterwards can open the same path again at once.
    @Test("a ledger released right after a verify, a digest or an export (on threads of their own) can be opened again at once")
    func aLedgerReleasedAfterWorkOffThePoolIsClosedAtOnce() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.append(json: JSONLine.permission("p-1", subject: "kid-eve", "camera", "authorized", at: "20:00:00", recorded: "20:00:00"))
            }
            for _ in 1...40 {
                do {
                    let ledger = try Ledger(path: path, options: .init(readOnly: true))
                    #expect(try await ledger.verify().isIntact)
                }
                do {
                    let ledger = try Ledger(path: path, options: .init(readOnly: true))
                    _ = try await ledger.digest()
                }
                do {
                    let ledger = try Ledger(path: path, options: .init(readOnly: true))
                    try await ledger.export { _ in }
                }
            }
        }
    }

    @Test func aReopenedLedgerContinuesTheChain() async throws {
        let events = try Fixtures.fixture("family-day.jsonl").events
        try await withTemporaryDirectory { directory async throws in
            // One ledger takes the events in batches, closed and reopened between them...
            let path = directory + "/reopened"
            var start = 0
            for size in [1, 2, 97, 300, 400, 400] {
                let ledger = try Ledger(path: path, options: .seeded())
                let summary = try await ledger.append(Array(events[start..<(start + size)]))
                start += size
                #expect(summary.head.seq == UInt64(start))
            }
            #expect(start == events.count)
            // ...and another in one go: they are the same ledger.
            let whole = try Ledger(path: directory + "/whole", options: .seeded(durable: false))
            _ = try await whole.append(events)
            let reopened = try Ledger(path: path, options: .seeded())
            #expect(try Snapshot(reopened) == Snapshot(whole))
            #expect(try await reopened.verify().isIntact)
        }
    }

    @Test func theRulesRememberTheStoredLog() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path)
                try await ledger.append(json:
                    JSONLine.asked("e1", question: QID.q1, at: "09:00:00", recorded: "09:00:01"),
                    JSONLine.answered("e2", question: QID.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"))
            }
            let ledger = try Ledger(path: path)
            // recordedAt may not go back before the stored head...
            let early = await rejections {
                try await ledger.append(json: JSONLine.permission("p1", "camera", "denied", at: "09:00:00", recorded: "09:05:00"))
            }
            #expect(early.first?.rejection.reason.contains("recordedAt") == true)
            // ...ids and answers are still known...
            #expect(try await ledger.append(json: JSONLine.answered("e2", question: QID.q1, choice: "approve", at: "09:05:00", recorded: "09:06:00")).outcomes == [.duplicate(of: 2)])
            let conflicting = await rejections {
                try await ledger.append(json: JSONLine.answered("e3", question: QID.q1, choice: "decline", at: "09:06:00", recorded: "09:06:01"))
            }
            #expect(conflicting.count == 1)
            // ...and the next event takes the next seq.
            #expect(try await ledger.append(json: JSONLine.permission("p1", "camera", "denied", at: "09:07:00", recorded: "09:07:01")).outcomes == [.appended(seq: 3)])
        }
    }
}
