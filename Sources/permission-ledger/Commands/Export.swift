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
                try opened.forEachEvent(after: after) { try written.write($0, to: &out) }
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

/// Which events of an export have reached standard output, so that an export cut short by a full disk can say
/// how far it got: the `seq` of each event given to ``Output`` with the byte count at its end, until its bytes
/// are written.
struct WrittenEvents {
    /// The last event whose line was written whole.
    private(set) var last: UInt64?
    /// The events given but perhaps not yet written: their `seq` and ``Output/given`` after their line.
    private var pending: [(seq: UInt64, end: Int)] = []
    private var firstPending = 0

    /// Writes `event` as a line of JSON.
    mutating func write(_ event: PermissionEvent, to out: inout Output) throws(OutputFailure) {
        let line = EventJSON.encode(event) + "\n"
        pending.append((event.seq ?? 0, out.given + line.utf8.count))
        defer { settle(upTo: out.written) }
        try out.write(line)
    }

    /// Moves the events whose lines end within the first `written` bytes from pending to ``last``.
    private mutating func settle(upTo written: Int) {
        while firstPending < pending.count, pending[firstPending].end <= written {
            last = pending[firstPending].seq
            firstPending += 1
        }
        if firstPending > 4096 {
            pending.removeFirst(firstPending)
            firstPending = 0
        }
    }

    /// What was written of the export once `written` bytes reached standard output.
    mutating func said(upTo written: Int) -> String {
        settle(upTo: written)
        guard let last else { return "no event was written" }
        return "the events up to seq \(last) were written, not those after it"
    }
}
