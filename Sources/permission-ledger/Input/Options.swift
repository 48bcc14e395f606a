import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct LedgerOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The ledger directory. Default: $PERMISSION_LEDGER, else ./permission-ledger.", valueName: "DIR"))
    var ledger: String?

    var path: String {
        ledger ?? ProcessInfo.processInfo.environment["PERMISSION_LEDGER"].flatMap { $0.isEmpty ? nil : $0 } ?? "permission-ledger"
    }

    /// Opens the ledger for reading only: never creates or changes anything.
    func openForReading() throws -> Ledger {
        do {
            return try Ledger(path: path, options: .init(readOnly: true))
        } catch {
            throw ToolFailure(error)
        }
    }

    /// Opens the ledger for writing, creating it when missing.
    func openForWriting() throws -> Ledger {
        do {
            return try Ledger(path: path)
        } catch {
            throw ToolFailure(error)
        }
    }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

struct FormatOption: ParsableArguments {
    @Option(help: "Output format: table (default on a terminal), json (default otherwise) or csv.")
    var format: OutputFormat?

    var resolved: OutputFormat { format ?? (isatty(STDOUT_FILENO) == 1 ? .table : .json) }
}

struct AsOfOption: ParsableArguments {
    @Option(name: .customLong("as-of"), help: ArgumentHelp(
        "Answer as of a point of the log: an RFC 3339 time (2026-11-20T14:00:00Z) or seq:N. Default: now.",
        valueName: "WHEN"))
    var asOf: String?

    /// The parsed point, or nil for now.
    func point() throws -> AsOf? {
        try asOf.map { try parseWhen($0, option: "--as-of") }
    }
}

/// Parses `--as-of` text ourselves, so that a bad WHEN gets a plain reason (and exit 2).
func parseWhen(_ text: String, option: String) throws -> AsOf {
    do {
        return try AsOf(parsing: text)
    } catch {
        throw ToolFailure(.usage, "usage: \(option) \(error.reason)")
    }
}

/// Parses an option's value that must be one of an enumeration's names (exit 2 with the choices otherwise).
func parseChoice<E: RawRepresentable & CaseIterable>(_ text: String, option: String) throws -> E where E.RawValue == String {
    guard let value = E(rawValue: text) else {
        throw ToolFailure(.usage, "usage: \(option) \(quoted(text)) is not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return value
}

/// Runs a read against the ledger, mapping its errors to exit codes.
func reading<T>(_ ledger: Ledger, asOf: AsOf?, _ body: (LedgerView) throws -> T) throws -> T {
    do {
        return try ledger.read(asOf: asOf ?? .now, body)
    } catch {
        throw ToolFailure(error)
    }
}
