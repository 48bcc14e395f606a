import Hummingbird
import Logging
import NIOCore
import PermissionLedger
import PermissionLedgerService
import ServiceLifecycle
import UnixSignals

/// An HTTP server over a ``PermissionLedger/Ledger``: appends JSON Lines, answers the audit queries as of any
/// point with the tool's JSON, and streams events as they are committed.
///
/// ```swift
/// let ledger = try await Ledger.open(path: "family.ledger")
/// let app = LedgerServer.application(ledger: ledger, configuration: .init(port: 8080), logger: logger)
/// try await LedgerServer.serviceGroup(ledger: ledger, app: app, logger: logger).run()
/// ```
public enum LedgerServer {
    /// The router with every route of the server.
    public static func router(ledger: Ledger, configuration: LedgerServerConfiguration) -> Router<BasicRequestContext> {
        let router = Router()
        let append = AppendRoute(ledger: ledger, maxBodyBytes: configuration.maxBodyBytes)
        router.post("events") { request, context in try await append.handle(request, context: context) }
        let stream = EventStreamRoute(ledger: ledger, pollInterval: configuration.streamPollInterval)
        router.get("events/stream") { request, context in try stream.handle(request, context: context) }
        QueryRoutes(ledger: ledger).register(on: router)
        return router
    }

    /// The Hummingbird application serving `ledger` on the configuration's host and port.
    ///
    /// - Parameter onListening: called once the server listens, with its port: the one the system chose
    ///   when the configuration asks for port 0.
    public static func application(
        ledger: Ledger, configuration: LedgerServerConfiguration, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(ledger: ledger, configuration: configuration),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    /// The service group that runs `app` and closes `ledger` after it.
    ///
    /// The ledger's service is listed first: a service group shuts its services down in reverse order, so on
    /// SIGTERM or SIGINT the HTTP server stops accepting connections, finishes the requests in flight (their
    /// appends are durable when they are answered) and ends the event streams; only then is the ledger closed.
    ///
    /// - Parameter maximumGracefulShutdownDuration: how long the shutdown may take before what is left is
    ///   cancelled (a client that never finishes sending its body would otherwise hold it forever); the
    ///   ledger's service still closes the ledger, after the appends already submitted.
    public static func serviceGroup(
        ledger: Ledger, app: some ApplicationProtocol, logger: Logger,
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        maximumGracefulShutdownDuration: Duration? = .seconds(30)
    ) -> ServiceGroup {
        var configuration = ServiceGroupConfiguration(
            services: [LedgerService(ledger), app], gracefulShutdownSignals: gracefulShutdownSignals, logger: logger)
        configuration.maximumGracefulShutdownDuration = maximumGracefulShutdownDuration
        return ServiceGroup(configuration: configuration)
    }
}
