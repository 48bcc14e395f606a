import Foundation
import Logging

/// Where `ledger-server` logs: standard error, so that standard output holds only the `listening on` line.
enum ServerLogging {
    /// Sends every log to standard error at `$LOG_LEVEL` (default `info`) and returns the server's logger.
    static func bootstrap() -> Logger {
        let level = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "ledger-server")
    }

    /// Writes one line to standard error.
    static func fail(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
