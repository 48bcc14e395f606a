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

    /// Parses `--as-of` first (a bad WHEN is wrong usage, whether the ledger exists or not), then opens the
    /// ledger read-only.
    func openForReading(asOf: AsOfOption) throws -> (Ledger, AsOf?) {
        let point = try asOf.point()
        return (try openForReading(), point)
    }

    /// Opens the ledger for reading only: never creates or changes anything.
    func openForReading() throws -> Ledger {
        do {
            return try Ledger(path: path, options: .init(readOnly: true))
        } catch {
            throw ToolFailure(error)
        }
    }

    /// Opens the ledger for writing, creating it when missing, after a walk of every page of its data file:
    /// nothing is appended to a damaged ledger.
    func openForWriting() throws -> Ledger {
        var options = Ledger.Options()
        options.checksPages = true
        do {
            return try Ledger(path: path, options: options)
        } catch {
            throw ToolFailure(error)
        }
    }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// `--format`, else `PERMISSION_LEDGER_FORMAT`, else `table`, on a terminal or not (docs/spec/CLI.md, "Common"):
/// a table redirected to a file stays a table, and `$(permission-ledger digest)` is the bare digest.
struct FormatOption: ParsableArguments {
    static let variable = "PERMISSION_LEDGER_FORMAT"

    @Option(help: "Output format: table, json or csv. Default: $PERMISSION_LEDGER_FORMAT, else table.")
    var format: OutputFormat?

    /// A `PERMISSION_LEDGER_FORMAT` that is not a format is wrong usage (exit 2), when `--format` is not given.
    func validate() throws {
        if format == nil { _ = try Self.environmentDefault() }
    }

    var resolved: OutputFormat { format ?? (try? Self.environmentDefault()) ?? .table }

    /// The format `PERMISSION_LEDGER_FORMAT` names; `table` when it is unset or empty.
    static func environmentDefault() throws -> OutputFormat {
        guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else { return .table }
        guard let format = OutputFormat(rawValue: text) else {
            throw ValidationError("\(variable)=\(quoted(text)) is not one of \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return format
    }
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
