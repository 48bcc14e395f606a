import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

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

    func run() throws {
        if checkingProcess { CheckingProcess.runChild(path: ledger.path) }
        switch CheckingProcess.check(path: ledger.path) ?? checkInProcess() {
        case .report(let events, let head, let damagedSeq, let problem):
            switch format.resolved {
            case .json:
                var json = JSONObjectWriter()
                json.bool("ok", problem == nil)
                json.integer("events", events)
                if let problem {
                    json.integer("damagedSeq", damagedSeq ?? 1)
                    json.string("problem", problem)
                } else {
                    json.string("head", head)
                }
                try writeOut(json.text)
            case .csv:
                try writeOut(Self.csv(ok: problem == nil, events: events, head: problem == nil ? head : nil,
                                  damagedSeq: problem == nil ? nil : damagedSeq ?? 1, problem: problem), terminator: "")
            case .table:
                if problem == nil { try writeOut("ok: \(events) events, head \(head)") }
            }
            if let problem {
                throw ToolFailure(.damaged, "seq \(damagedSeq ?? 1): \(problem)")
            }
        case .failure(let kind, let message, let seq, let remedy):
            let error = LedgerError(kind, message, seq: seq, remedy: remedy)
            guard kind == .damaged else { throw ToolFailure(error) }
            switch format.resolved {
            case .json:
                var json = JSONObjectWriter()
                json.bool("ok", false)
                json.integer("events", UInt64?.none)
                json.integer("damagedSeq", seq ?? 1)
                json.string("problem", message)
                try writeOut(json.text)
            case .csv:
                try writeOut(Self.csv(ok: false, events: nil, head: nil, damagedSeq: seq ?? 1, problem: message), terminator: "")
            case .table:
                break
            }
            throw ToolFailure(.damaged, error.toolDescription)
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
            return .failure(kind: error.kind, message: error.message, seq: error.seq, remedy: error.remedy)
        }
    }
}
