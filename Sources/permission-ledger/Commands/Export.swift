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
    @Option(help: ArgumentHelp(
        "Only the events after this seq (default 0: all). At the head, nothing is written and export exits 0; past the head it is an error (exit 1).",
        valueName: "SEQ"))
    var after: String?
    @Flag(help: "Keep running and write new events as they are appended.")
    var follow = false
    @Option(help: ArgumentHelp(
        "With --follow: how often to look for new events, in seconds, from \(Self.pollRange.lowerBound) to \(Int(Self.pollRange.upperBound)). Default: 0.25.",
        valueName: "SECONDS"))
    var poll: Double = 0.25

    /// The poll intervals allowed: shorter than a hundredth of a second would keep a core busy for nothing.
    static let pollRange = 0.01...3600.0

    func validate() throws {
        guard Self.pollRange.contains(poll) else {
            throw ValidationError("--poll must be between \(Self.pollRange.lowerBound) and \(Int(Self.pollRange.upperBound)) seconds")
        }
    }

    /// Writes the events after `after`, on this thread: the command has nothing else to do meanwhile.
    private static func writeAll(of ledger: Ledger, after: UInt64, with written: inout WrittenEvents, to out: inout Output) throws {
        try ledger.forEachEvent(after: after) { try written.write($0, to: &out) }
    }

    func run() async throws {
        let after = try self.after.map { try parseSeq($0, option: "--after") } ?? 0
        let opened = try ledger.openForReading()
        var out = Output()
        var written = WrittenEvents()
        do {
            // At the head is a poller's normal case (nothing new yet); past it is a mistake or another ledger.
            let head = try opened.head()
            guard after <= head.seq else {
                throw ToolFailure(.rejected, "--after \(after) is beyond the end of the log (the head is seq \(head.seq))")
            }
            guard follow else {
                try Self.writeAll(of: opened, after: after, with: &written, to: &out)
                try out.flush()
                return
            }
            // Catching up and following are one subscription: no event is missed or repeated between them.
            for try await event in opened.events(after: after, pollInterval: .milliseconds(Int(poll * 1000))) {
                try written.write(event, to: &out)
                try out.flush()
            }
        } catch let failure as OutputFailure {
            throw ToolFailure.outputFailed(errno: failure.errno, saying: written.said(upTo: out.written))
        } catch {
            // The events read before a failure are still written; the failure reported is the first one.
            do {
                try out.flush()
            } catch {
                throw ToolFailure.outputFailed(errno: error.errno, saying: written.said(upTo: out.written))
            }
            throw ToolFailure(error)
        }
        do {
            try out.flush()
        } catch {
            throw ToolFailure.outputFailed(errno: error.errno, saying: written.said(upTo: out.written))
        }
    }
}
