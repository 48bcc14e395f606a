import Hummingbird
import LedgerServer
import Logging
import PermissionLedger
import ServiceLifecycle

/// The server as `ledger-server` runs it, in a service group with the ledger's service, on a free port.
enum RunningServer {
    /// Runs the server over `ledger` while `body` runs with its port, then shuts the group down gracefully
    /// (unless `body` did) and waits for it to finish.
    static func with<T: Sendable>(
        ledger: Ledger, _ body: @escaping @Sendable (_ port: Int, _ group: ServiceGroup) async throws -> T
    ) async throws -> T {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "ledger-server-tests")
        logger.logLevel = .warning
        let app = LedgerServer.application(
            ledger: ledger, configuration: .init(port: 0, streamPollInterval: .milliseconds(100)), logger: logger
        ) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let group = LedgerServer.serviceGroup(ledger: ledger, app: app, logger: logger, gracefulShutdownSignals: [])
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ServerDidNotStart() }
            do {
                let result = try await body(port, group)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
        }
    }

    struct ServerDidNotStart: Error {}
}
