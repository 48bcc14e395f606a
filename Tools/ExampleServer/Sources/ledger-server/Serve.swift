import ArgumentParser
import Foundation
import LedgerServer
import Logging
import PermissionLedger

/// `ledger-server [serve] --ledger PATH [--host H] [--port P]`: opens (or creates) the ledger and serves it
/// until SIGTERM or SIGINT, then stops accepting, finishes the requests in flight, closes the ledger and
/// exits 0.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the ledger until SIGTERM or SIGINT (the default command).",
        discussion: """
        Prints `listening on http://HOST:PORT` on standard output once it accepts connections (with --port 0, \
        the port the system chose); logs go to standard error, at the level of $LOG_LEVEL (default info), \
        and never hold a personal value. On SIGTERM or SIGINT it stops accepting connections, answers the \
        requests in flight, ends the event streams, closes the ledger and exits 0.

        Example:
          ledger-server --ledger family.ledger --port 8080
        """)

    @Option(help: ArgumentHelp("The ledger directory; created when missing.", valueName: "PATH"))
    var ledger: String
    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"
    @Option(help: "The port to listen on; 0 lets the system choose.")
    var port = 8080
    @Option(help: "The largest POST /events body accepted, in bytes.")
    var maxBodyBytes = 16 << 20

    func run() async throws {
        let logger = ServerLogging.bootstrap()
        let opened = try await openLedger(logger: logger)
        let configuration = LedgerServerConfiguration(host: host, port: port, maxBodyBytes: maxBodyBytes)
        let host = self.host
        let app = LedgerServer.application(ledger: opened, configuration: configuration, logger: logger) { port in
            // The one line on standard output, written at once (unbuffered): scripts wait for it.
            FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
        }
        try await LedgerServer.serviceGroup(ledger: opened, app: app, logger: logger).run()
        logger.info("stopped; the ledger is closed")
    }

    /// Opens the ledger for writing, creating it when missing, after a check of every page of its data file,
    /// as `permission-ledger import` does: nothing is appended to a damaged ledger.
    private func openLedger(logger: Logger) async throws -> Ledger {
        var options = Ledger.Options(logger: logger)
        options.checksPages = true
        do {
            return try await Ledger.open(path: ledger, options: options)
        } catch let error as LedgerError {
            ServerLogging.fail("ledger-server: \(error.description)")
            throw ExitCode(3)
        }
    }
}
