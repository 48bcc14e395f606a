import Foundation
import Logging
import PermissionLedger
import PermissionLedgerService
import PermissionModel
import ServiceLifecycle
import Testing

/// The ledger as a swift-service-lifecycle service: closed, appends drained, on graceful shutdown.
@Suite struct LedgerServiceTests {
    @Test("graceful shutdown of the group closes the ledger after the appends in flight, and frees its path")
    func gracefulShutdownClosesTheLedger() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let ledger = try await Ledger.open(path: path, options: .init(durable: false))
            let group = ServiceGroup(
                services: [LedgerService(ledger)], gracefulShutdownSignals: [],
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            let running = Task { try await group.run() }
            let child = ledger.subject("kid-1")
            let appends = (0..<50).map { n in
                Task { try await child.recordPermission(.camera, state: n % 2 == 0 ? .authorized : .denied, at: Timestamp(microseconds: Int64(n))) }
            }
            // A subscription alive at shutdown finishes.
            let subscription = Task {
                var count = 0
                for try await _ in ledger.events() { count += 1 }
                return count
            }
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(ledger.isClosed)
            let acknowledged = await appends.asyncCount { (try? await $0.value) != nil }
            _ = try await subscription.value
            await #expect(throws: LedgerError.self) { try await child.recordPermission(.camera, state: .denied) }

            // Every acknowledged append is there when the path is opened again in this process.
            let reopened = try await Ledger.open(path: path, options: .init(readOnly: true))
            #expect(try reopened.head().seq == UInt64(acknowledged))
            #expect(try await reopened.verify().isIntact)
        }
    }
}

extension Array {
    /// How many elements `predicate` holds for, asked one at a time.
    func asyncCount(_ predicate: (Element) async -> Bool) async -> Int {
        var count = 0
        for element in self where await predicate(element) { count += 1 }
        return count
    }
}
