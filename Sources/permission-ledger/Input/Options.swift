import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct LedgerOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The ledger directory. Default: $PERMISSION_LEDGER, else ./permission-ledger.", valueName: "DIR"))
    var ledger: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp(
        "The ledger's key file. Default: $PERMISSION_LEDGER_KEY_FILE, else ledger.key in the ledger directory.", valueName: "FILE"))
    var keyFile: String?

    var path: String {
        ledger ?? ProcessInfo.processInfo.environment["PERMISSION_LEDGER"].flatMap { $0.isEmpty ? nil : $0 } ?? "permission-ledger"
    }

    /// An empty `--ledger` names no directory: wrong usage (exit 2), not a directory that cannot be created.
    func validate() throws {
        if ledger == "" { throw ValidationError("--ledger: an empty path") }
        if keyFile == "" { throw ValidationError("--key-file: an empty path") }
    }

    /// Parses `--as-of` first (a bad WHEN is wrong usage, whether the ledger exists or not), then opens the
    /// ledger read-only.
    func openForReading(asOf: some AsOfPointOption) throws -> (Ledger, AsOf?) {
        let point = try asOf.point()
        return (try openForReading(), point)
    }

    /// Opens the ledger for reading only: never creates or changes anything.
    func openForReading() throws -> Ledger {
        do {
            var options = Ledger.Options(readOnly: true)
            options.keyFile = keyFile
            return try Ledger(path: path, options: options)
        } catch {
            throw ToolFailure(error)
        }
    }

    /// Opens the ledger for writing, after a walk of every page of its data file: nothing is appended to a damaged
    /// ledger. A missing ledger is made when `makes` (`import`); `erase` and `retain` need one that exists.
    func openForWriting(makes: Bool = true) throws -> Ledger {
        var options = Ledger.Options()
        options.makesLedger = makes
        options.checksPages = true
        options.keyFile = keyFile
        options.secrets = ToolSecrets.source
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

/// An `--as-of` option: its point, nil when it is not given.
protocol AsOfPointOption {
    func point() throws -> AsOf?
}

extension AsOfOption: AsOfPointOption {}
extension AsOfHeadOption: AsOfPointOption {}

/// `--as-of` of the queries that answer as of now by default.
struct AsOfOption: ParsableArguments {
    @Option(name: .customLong("as-of"), help: ArgumentHelp(
        "Answer as of a point of the log: an RFC 3339 time (2026-11-20T14:00:00Z) or seq:N. Default: now (every event recorded so far, with the current time as the clock).",
        valueName: "WHEN"))
    var asOf: String?

    /// The parsed point, or nil for now.
    func point() throws -> AsOf? {
        try asOf.map { try parseWhen($0, option: "--as-of") }
    }
}

/// `--as-of` of the commands whose answer must not change with the wall clock (`digest`, `replay`): by default
/// they answer as of the head.
struct AsOfHeadOption: ParsableArguments {
    @Option(name: .customLong("as-of"), help: ArgumentHelp(
        "Answer as of a point of the log: an RFC 3339 time (2026-11-20T14:00:00Z) or seq:N. Default: the head (seq:N of the last event), so that the answer does not change with the wall clock.",
        valueName: "WHEN"))
    var asOf: String?

    /// The parsed point, or nil for the head.
    func point() throws -> AsOf? {
        try asOf.map { try parseWhen($0, option: "--as-of") }
    }
}

/// Parses a WHEN (`seq:N` or an RFC 3339 time) as the library does, so that a bad one gets its plain reason
/// (and exit 2). A `seq:N` beyond any seq a ledger can hold (``/PermissionLedger/AsOf/largestSeq``) is wrong
/// usage too; one beyond the head of the ledger at hand is not known until it is opened (exit 1).
func parseWhen(_ text: String, option: String) throws -> AsOf {
    do {
        return try AsOf(parsing: text)
    } catch {
        throw ToolFailure(.usage, "usage: \(option) \(error.reason)")
    }
}

/// Parses a question id or its abbreviation (exit 2 when it is neither).
func parseQuestion(_ text: String) throws -> QuestionReference {
    do {
        return try QuestionReference(parsing: text)
    } catch {
        throw ToolFailure(.usage, "usage: \(error.reason)")
    }
}

/// Parses a seq given as an option's value (`--after`): a whole number from 0 to `AsOf.largestSeq`, else wrong
/// usage (exit 2), the same message for a number past it as for one past UInt64.
func parseSeq(_ text: String, option: String) throws -> UInt64 {
    let shown = text
    guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
        throw ToolFailure(.usage, "usage: \(option) \(quoted(shown)) is not a seq: expected a whole number")
    }
    guard let seq = UInt64(text), seq <= AsOf.largestSeq else {
        throw ToolFailure(.usage, "usage: \(option) \(shown) is beyond any seq a ledger can hold (at most \(AsOf.largestSeq))")
    }
    return seq
}

/// Parses an option's value that must be one of an enumeration's names (exit 2 with the choices otherwise).
func parseChoice<E: RawRepresentable & CaseIterable>(_ text: String, option: String) throws -> E where E.RawValue == String {
    guard let value = E(rawValue: text) else {
        throw ToolFailure(.usage, "usage: \(option) \(quoted(text)) is not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return value
}

/// Runs a read against the ledger, mapping its errors to exit codes. `body` only returns what it read (the command
/// writes it out afterwards), so it is run again, up to ``Ledger/readRetries`` times, when an erasure recorded
/// while it read destroyed a key it needed (another process's `erase` or `retain`).
func reading<T>(_ ledger: Ledger, asOf: AsOf?, _ body: (LedgerView) throws -> T) throws -> T {
    do {
        return try ledger.read(asOf: asOf ?? .now, retries: Ledger.readRetries, body)
    } catch {
        throw ToolFailure(error)
    }
}
