import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the ledger's events as JSON Lines, with seq, recordedAt and hash.",
        discussion: """
        Keys are in a fixed order, so an export imported into an empty ledger gives an identical \
        ledger (same export, same head hash).

        With --follow, export keeps running after the last event and writes each new event as \
        another process appends it (like tail -f), every event exactly once and in order, until it \
        is interrupted.

        Examples:
          permission-ledger export --ledger family.ledger > family.jsonl
          permission-ledger export --ledger family.ledger --after 1200 --follow
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("Only the events after this seq.", valueName: "SEQ"))
    var after: UInt64 = 0
    @Flag(help: "Keep running and write new events as they are appended.")
    var follow = false
    @Option(help: ArgumentHelp("With --follow: how often to look for new events, in seconds.", valueName: "SECONDS"))
    var poll: Double = 0.25

    func validate() throws {
        guard poll > 0, poll <= 3600 else { throw ValidationError("--poll must be between 0 and 3600 seconds") }
    }

    func run() async throws {
        let opened = try ledger.openForReading()
        var out = Output()
        do {
            guard follow else {
                try opened.export(after: after) { try out.write($0) }
                try out.flush()
                return
            }
            // Catching up and following are one subscription: no event is missed or repeated between them.
            for try await event in opened.events(after: after, pollInterval: .milliseconds(Int(poll * 1000))) {
                try out.write(EventJSON.encode(event) + "\n")
                try out.flush()
            }
        } catch {
            // The events read before a failure are still written; the failure reported is the first one (after
            // an output failure nothing is left to write).
            try? out.flush()
            throw ToolFailure(error)
        }
        try out.flush()
    }
}
