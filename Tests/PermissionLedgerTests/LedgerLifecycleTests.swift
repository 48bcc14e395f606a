import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// `Ledger.close()`: the writer drained, subscriptions finished, the files released, every later call a
/// `.closed` error, and the same path open again in the same process.
@Suite struct LedgerLifecycleTests {
    /// The descriptors of this process open on files in `directory` (other tests' files are elsewhere).
    static func descriptors(in directory: String) -> Int {
        let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.count { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry) else { return false }
            return target.hasPrefix(resolved + "/") || target.hasPrefix(directory + "/")
        }
    }

    /// The threads of this process.
    static func threads() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    @Test("open, use with a subscription and SubjectLedgers alive, close and reopen one path 100 times: nothing left open")
    func closeAndReopenAHundredTimes() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            var kept: [SubjectLedger] = []
            let threadsBefore = Self.threads()
            for round in 0..<100 {
                let ledger = try Ledger(path: path, options: .init(durable: true))
                let kid = ledger.subject("kid-ava")
                kept.append(kid)
                let subscription = Task {
                    var seen = 0
                    for try await _ in ledger.events(pollInterval: .seconds(60)) { seen += 1 }
                    return seen
                }
                let state: SystemPermission.State = round % 2 == 0 ? .authorized : .denied
                try await kid.recordPermission(.camera, state: state, at: Timestamp(microseconds: Int64(round) * 1_000_000), id: "p-\(round)")
                #expect(Self.descriptors(in: path) > 0)

                await ledger.close()
                // The subscription ends instead of waiting a minute for the next poll, having seen what was there.
                let seen = try await subscription.value
                #expect(seen <= round + 1)
                #expect(ledger.isClosed)
                #expect(Self.descriptors(in: path) == 0, "round \(round): the ledger's files are closed")
                let error = ledgerError { _ = try ledger.head() }
                #expect(error?.kind == .closed)
                await #expect(throws: LedgerError.self) { try await kid.recordPermission(.microphone, state: .denied) }
                await ledger.close()  // a second close does nothing
            }
            #expect(kept.count == 100)
            // A thread left behind by each round would show as a hundred more; other tests' threads come and go,
            // so the count is given up to a minute to fall back under the limit.
            var threadsAfter = Self.threads()
            let deadline = ContinuousClock.now + .seconds(60)
            while threadsAfter >= threadsBefore + 50, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                threadsAfter = Self.threads()
            }
            #expect(threadsAfter < threadsBefore + 50, "\(threadsAfter) threads, \(threadsBefore) before")
            let reopened = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try reopened.head().seq == 100)
            #expect(try await reopened.verify().isIntact)
        }
    }

    @Test("appends submitted before close are committed; appends after it fail with .closed")
    func closeDrainsTheWriter() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .init(durable: false))
            let kid = ledger.subject("kid-ava")
            let appends = (0..<20).map { n in
                Task { try await kid.recordPermission(.camera, state: n % 2 == 0 ? .authorized : .denied, at: Timestamp(microseconds: Int64(n)), id: "p-\(n)") }
            }
            // Let some reach the writer's queue, then close while others may still be on their way.
            for task in appends.prefix(10) { _ = try await task.value }
            await ledger.close()
            var committed = 10
            for task in appends.dropFirst(10) {
                do {
                    _ = try await task.value
                    committed += 1
                } catch let error as LedgerError {
                    #expect(error.kind == .closed, "\(error)")
                }
            }
            let error = await #expect(throws: LedgerError.self) { try await kid.recordPermission(.camera, state: .denied, id: "late") }
            #expect(error?.kind == .closed)
            let reopened = try Ledger(path: path, options: .init(durable: false))
            #expect(try reopened.head().seq == UInt64(committed), "every append that returned is in the ledger, and nothing else")
        }
    }
}
