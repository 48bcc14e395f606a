public import PermissionLedger
public import ServiceLifecycle

/// A ``/PermissionLedger/Ledger`` run as a swift-service-lifecycle `Service`: it keeps the ledger open while
/// the service group runs and closes it on graceful shutdown (SIGTERM, SIGINT, or the group ending).
///
/// List it before the services that use the ledger: a `ServiceGroup` shuts its services down in reverse
/// order, so an HTTP server listed after it stops taking requests and finishes those in flight before the
/// ledger drains its writer and closes.
///
/// ```swift
/// let ledger = try await Ledger.open(path: "family.ledger")
/// let group = ServiceGroup(
///     services: [LedgerService(ledger), app],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger)
/// try await group.run()
/// ```
public struct LedgerService: Service {
    /// The ledger this service closes on shutdown.
    public let ledger: Ledger

    /// A service that closes `ledger` on graceful shutdown or cancellation.
    public init(_ ledger: Ledger) {
        self.ledger = ledger
    }

    /// Waits for graceful shutdown (or cancellation of the task), then closes the ledger: the appends already
    /// submitted are committed and durable, every subscription finishes, and the files are closed.
    public func run() async throws {
        // Returns on graceful shutdown; throws CancellationError when the group is cancelled instead.
        try? await gracefulShutdown()
        await ledger.close()
    }
}
