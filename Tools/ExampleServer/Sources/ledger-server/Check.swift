import ArgumentParser
import Foundation
import PermissionLedger

/// `ledger-server check`: what Tools/server-load.sh asks of a ledger after a SIGTERM in the middle of a load:
/// the log verifies, every id the client saw acknowledged (a 2xx) is in it, and every event in it was sent.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a ledger and check it against the ids a load client sent and saw acknowledged.",
        discussion: """
        Opens the ledger read-only and runs Ledger.verify() (the hash chain and every projection). With \
        --acknowledged, every event id in that file (one a line) must be in the ledger: an acknowledged \
        append is durable. With --sent, every event of the ledger must have its id in that file: nothing \
        else appears. Prints one line per finding and a summary line, and exits 0 when all hold, 1 otherwise, \
        3 when the ledger cannot be opened.

        Example:
          ledger-server check --ledger run.ledger --acknowledged acknowledged.txt --sent sent.txt
        """)

    @Option(help: ArgumentHelp("The ledger directory.", valueName: "PATH"))
    var ledger: String
    @Option(help: ArgumentHelp("The ids the client saw acknowledged, one a line.", valueName: "FILE"))
    var acknowledged: String?
    @Option(help: ArgumentHelp("The ids the client sent, one a line.", valueName: "FILE"))
    var sent: String?

    func run() async throws {
        let opened: Ledger
        do {
            opened = try Ledger(path: ledger, options: .init(readOnly: true))
        } catch {
            print("check: \(error)")
            throw ExitCode(3)
        }
        let report = try await opened.verify()
        let stored = try storedIDs(opened)
        var failed = !report.isIntact
        print(report.isIntact ? "verify: ok, \(report.events) events, head \(report.head)" : "verify: DAMAGED: \(report.problem ?? "")")
        var missing: [String] = []
        if let acknowledged {
            let ids = try Self.ids(inFile: acknowledged)
            missing = ids.filter { !stored.contains($0) }
            failed = failed || !missing.isEmpty
            print(missing.isEmpty
                ? "acknowledged: all \(ids.count) in the ledger"
                : "acknowledged: \(missing.count) of \(ids.count) MISSING from the ledger, such as \(missing.prefix(3).joined(separator: ", "))")
        }
        var unexpected: [String] = []
        if let sent {
            let ids = Set(try Self.ids(inFile: sent))
            unexpected = stored.filter { !ids.contains($0) }.sorted()
            failed = failed || !unexpected.isEmpty
            print(unexpected.isEmpty
                ? "sent: every one of the \(stored.count) events was sent (\(ids.count) ids sent)"
                : "sent: \(unexpected.count) events of the ledger were NEVER SENT, such as \(unexpected.prefix(3).joined(separator: ", "))")
        }
        print("check: \(failed ? "FAILED" : "ok") events=\(stored.count) verify=\(report.isIntact ? "ok" : "damaged") missing=\(missing.count) unexpected=\(unexpected.count)")
        await opened.close()
        if failed { throw ExitCode(1) }
    }

    /// The id of every event in the ledger.
    private func storedIDs(_ ledger: Ledger) throws -> Set<String> {
        try ledger.read { view in
            var ids = Set<String>()
            try view.forEachEvent(after: 0, through: view.head.seq) { ids.insert($0.id) }
            return ids
        }
    }

    /// The non-empty lines of a file.
    private static func ids(inFile path: String) throws -> [String] {
        do {
            return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        } catch {
            print("check: \(path): cannot be read")
            throw ExitCode(3)
        }
    }
}
