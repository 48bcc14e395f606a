import ArgumentParser
import Foundation
@_spi(Testing) import PermissionLedger
import PermissionModel

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append the events of JSON Lines files to the ledger, all or nothing.",
        discussion: """
        Each line is one event in the form of EVENTS.md. If any line is rejected, nothing from \
        this call is written and every rejected line is reported (up to 100) as FILE:LINE: reason. \
        Events already in the ledger (same id, same content) are counted as duplicates. \
        The files are read line by line, so memory stays bounded however large they are.

        Example:
          permission-ledger import --ledger family.ledger Fixtures/approval-messages.jsonl
        """)

    @OptionGroup var ledger: LedgerOption
    @Argument(help: ArgumentHelp("JSON Lines files to import; - reads standard input.", valueName: "FILE"))
    var files: [String]

    func run() throws {
        // Every file is opened first: a missing one stops the import before the ledger is touched.
        let input = try EventFiles.open(files)
        let opened = try ledger.openForWriting()
        let summary = try input.append(to: opened)
        writeOut("imported \(summary.appended) event\(summary.appended == 1 ? "" : "s"), \(summary.duplicates) duplicate\(summary.duplicates == 1 ? "" : "s"); head seq \(summary.head.seq)")
    }
}

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
                try opened.export(after: after) { out.write($0) }
                out.flush()
                return
            }
            // Catching up and following are one subscription: no event is missed or repeated between them.
            for try await event in opened.events(after: after, pollInterval: .milliseconds(Int(poll * 1000))) {
                out.write(EventJSON.encode(event) + "\n")
                out.flush()
            }
        } catch {
            out.flush()
            throw ToolFailure(error)
        }
        out.flush()
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the hash chain, every stored event and every projection against a rebuild.",
        discussion: """
        Prints "ok: N events, head HASH" and exits 0, or names the first damaged seq and exits 4. \
        Also checked: the data file's meta pages (a damaged one can make LMDB show an older commit), \
        that every row is found again by a lookup, and LMDB's free list. The check runs in a child \
        process, so that a data file damaged where LMDB cannot read it safely is reported as damage \
        (exit 4) instead of crashing the tool. A ledger that is missing, locked, or not a ledger at \
        all exits 3; one whose data file LMDB finds corrupted, or that lacks some of the ledger's \
        tables, is damaged (exit 4).

        Example:
          permission-ledger verify --ledger family.ledger
        """)

    @OptionGroup var ledger: LedgerOption
    @OptionGroup var format: FormatOption
    /// Set on the child process that does the check (see CheckingProcess).
    @Flag(name: .customLong(CheckingProcess.option), help: .private)
    var checkingProcess = false
    /// For the tests of damage detection: print each LMDB database's rows and digest instead (see
    /// `Ledger.tableDigests`), to tell whether damage changed what a reader sees.
    @Flag(name: .customLong("table-digests"), help: .private)
    var tableDigests = false

    func run() throws {
        if tableDigests {
            do {
                for table in try Ledger.tableDigests(path: ledger.path) { writeOut("\(table.table) \(table.rows) \(table.digest)") }
                return
            } catch {
                throw ToolFailure(.unreadable, "\(ledger.path): \(error)")
            }
        }
        if checkingProcess { CheckingProcess.runChild(path: ledger.path) }
        switch CheckingProcess.check(path: ledger.path) ?? checkInProcess() {
        case .report(let events, let head, let damagedSeq, let problem):
            switch format.resolved {
            case .json:
                if let problem {
                    writeOut(#"{"ok":false,"events":\#(events),"damagedSeq":\#(damagedSeq ?? 1),"problem":\#(jsonString(problem))}"#)
                } else {
                    writeOut(#"{"ok":true,"events":\#(events),"head":"\#(head)"}"#)
                }
            case .csv:
                writeOut(Self.csv(ok: problem == nil, events: events, head: problem == nil ? head : nil,
                                  damagedSeq: problem == nil ? nil : damagedSeq ?? 1, problem: problem), terminator: "")
            case .table:
                if problem == nil { writeOut("ok: \(events) events, head \(head)") }
            }
            if let problem {
                throw ToolFailure(.damaged, "seq \(damagedSeq ?? 1): \(problem)")
            }
        case .failure(let kind, let message, let seq):
            let error = LedgerError(kind, message, seq: seq)
            guard kind == .damaged else { throw ToolFailure(error) }
            switch format.resolved {
            case .json:
                writeOut(#"{"ok":false,"events":null,"damagedSeq":\#(seq ?? 1),"problem":\#(jsonString(message))}"#)
            case .csv:
                writeOut(Self.csv(ok: false, events: nil, head: nil, damagedSeq: seq ?? 1, problem: message), terminator: "")
            case .table:
                break
            }
            throw ToolFailure(.damaged, error.description)
        }
    }

    /// The outcome as one CSV record under a header, the fields of the JSON form; those that do not apply are empty.
    private static func csv(ok: Bool, events: UInt64?, head: String?, damagedSeq: UInt64?, problem: String?) -> String {
        var table = Table("ok", "events", "head", "damagedSeq", "problem")
        table.add(String(ok), events.map(String.init) ?? "", head ?? "", damagedSeq.map(String.init) ?? "", problem ?? "")
        return table.csv()
    }

    /// The check without a child process, for when none could be started.
    private func checkInProcess() -> CheckingProcess.Outcome {
        do {
            let report = try Ledger.verify(path: ledger.path)
            return .report(events: report.events, head: "\(report.head)", damagedSeq: report.damagedSeq, problem: report.problem)
        } catch {
            return .failure(kind: error.kind, message: error.message, seq: error.seq)
        }
    }
}

struct Rebuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Derive every projection and index anew from the log (the log itself is not changed).",
        discussion: """
        Use it when verify reports a damaged projection while the log is intact, or when a newer \
        PermissionLedger asks for it. Then run verify.

        It first reserves room on disk for the data file: about twice what the ledger uses, kept for later \
        appends. On a full disk it stops there, before it writes anything. Other processes may read and \
        append meanwhile (appends wait until the rebuild has committed).

        Example:
          permission-ledger rebuild --ledger family.ledger && permission-ledger verify --ledger family.ledger
        """)

    @OptionGroup var ledger: LedgerOption

    func run() throws {
        do {
            let head = try Ledger.rebuildProjections(path: ledger.path)
            writeOut("rebuilt the projections of \(head.seq) events")
        } catch {
            throw ToolFailure(error)
        }
    }
}

struct Digest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the SHA-256 of all derived state at a point of the log.",
        discussion: """
        Equal for any two ledgers holding the same events. Without --as-of the digest is taken as \
        of the head (seq of the last event), so it does not change with the wall clock.

        Example:
          permission-ledger digest --ledger family.ledger --as-of seq:10
        """)

    @OptionGroup var ledger: LedgerOption
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let result: (String, AsOfPoint)
        do {
            let resolved = try point ?? .seq(opened.head().seq)
            result = try opened.read(asOf: resolved) { (try $0.digest(), $0.point) }
        } catch {
            throw ToolFailure(error)
        }
        switch format.resolved {
        case .json: writeOut(#"{"asOf":\#(QueryJSON.asOf(result.1)),"digest":"\#(result.0)"}"#)
        case .csv:
            var table = Table("asOfSeq", "asOfTime", "digest")
            table.add(String(result.1.seq), result.1.time.description, result.0)
            writeOut(table.csv(), terminator: "")
        case .table: writeOut(result.0)
        }
    }
}

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import files into a fresh temporary ledger, print its digest and head hash, then remove it.",
        discussion: """
        With --expect-digest, exits 5 when the digest differs. Useful in any project's CI to pin \
        down what a fixture means.

        Example:
          permission-ledger replay Fixtures/late-answer.jsonl --expect-digest 3f2a…
        """)

    @Argument(help: ArgumentHelp("JSON Lines files to replay, in order; - reads standard input.", valueName: "FILE"))
    var files: [String]
    @OptionGroup var asOf: AsOfOption
    @Option(name: .customLong("expect-digest"), help: ArgumentHelp("Exit 5 unless the digest is this.", valueName: "HEX"))
    var expectDigest: String?
    @OptionGroup var format: FormatOption

    func validate() throws {
        // A malformed expectation is wrong usage (exit 2), not a digest that differs (exit 5).
        // ASCII digits and letters only: `Character.isHexDigit` also takes their fullwidth forms.
        if let expectDigest, expectDigest.utf8.count != 64
            || !expectDigest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0 & 0xDF) }) {
            throw ValidationError("--expect-digest \(quoted(expectDigest)) is not a digest: expected 64 hexadecimal digits, as digest prints them")
        }
    }

    func run() throws {
        let point = try asOf.point()
        let input = try EventFiles.open(files)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("permission-ledger-replay-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger: Ledger
        do {
            ledger = try Ledger(path: directory, options: .init(durable: false))
        } catch {
            throw ToolFailure(error)
        }
        let summary = try input.append(to: ledger)
        let digest: String
        let resolved: AsOfPoint
        do {
            (digest, resolved) = try ledger.read(asOf: point ?? .seq(summary.head.seq)) { (try $0.digest(), $0.point) }
        } catch {
            throw ToolFailure(error)
        }
        switch format.resolved {
        case .json:
            writeOut(#"{"asOf":\#(QueryJSON.asOf(resolved)),"digest":"\#(digest)","head":"\#(summary.head.hash)","events":\#(summary.head.seq)}"#)
        case .csv:
            var table = Table("asOfSeq", "asOfTime", "digest", "head", "events")
            table.add(String(resolved.seq), resolved.time.description, digest, "\(summary.head.hash)", String(summary.head.seq))
            writeOut(table.csv(), terminator: "")
        case .table:
            writeOut("digest \(digest)\nhead   \(summary.head.hash) (\(summary.head.seq) events)")
        }
        if let expectDigest, expectDigest.lowercased() != digest {
            throw ToolFailure(.digestMismatch, "digest \(digest) differs from the expected \(expectDigest)")
        }
    }
}

func jsonString(_ s: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
    return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
}
