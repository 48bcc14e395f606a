import Foundation
import Testing

/// docs/spec/PRIVACY.md, "Commands": `erase` and `retain`.
@Suite("erase and retain", .timeLimit(.minutes(10)))
struct EraseCommandTests {
    static let events = """
        {"type":"handles.observed","id":"early","subject":"kid-ava","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:00Z","checked":[{"value":"+14155550101","kind":"phoneNumber"},{"value":"early.friend","kind":"custom"}],"known":[{"value":"+14155550101","kind":"phoneNumber"}]}
        {"type":"handles.observed","id":"other","subject":"kid-ben","occurredAt":"2026-11-20T09:30:00Z","recordedAt":"2026-11-20T09:30:00Z","checked":[{"value":"ben.friend","kind":"custom"}],"known":[]}
        {"type":"handles.observed","id":"late","subject":"kid-ava","occurredAt":"2026-11-20T12:00:00Z","recordedAt":"2026-11-20T12:00:00Z","checked":[{"value":"late.friend","kind":"custom"}],"known":[]}

        """

    /// Erases kid-ava's events with the tool, requiring success.
    static func eraseAva(_ ledger: String, _ sandbox: Sandbox) throws {
        let erase = try sandbox.run(["erase", "--ledger", ledger, "--subject", "kid-ava", "--basis", "guardianRequest"])
        try #require(erase.status == 0, "\(erase)")
    }

    /// The lines of an export.
    static func lines(_ export: String) -> [String] { export.split(separator: "\n").map(String.init) }

    @Test("erase records the erasure, says what it erased, and the value is gone from every output and file")
    func eraseSaysWhatItErased() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "events.jsonl"))
            let run = try sandbox.run(["erase", "--ledger", ledger, "--subject", "kid-ava", "--basis", "guardianRequest",
                                       "--reference", "case-4711", "--occurred-at", "2026-11-20T13:00:00Z", "--format", "json"])
            #expect(run.status == 0, "\(run)")
            #expect(run.out == #"{"erased":{"subject":"kid-ava","seq":4,"events":2,"fields":4}}"# + "\n")
            let export = try sandbox.run(["export", "--ledger", ledger])
            #expect(!export.out.contains("4155550101") && !export.out.contains("early.friend") && export.out.contains("ben.friend"))
            for name in try FileManager.default.contentsOfDirectory(atPath: ledger) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: ledger + "/" + name))
                #expect(bytes.range(of: Data("4155550101".utf8)) == nil, "\(name)")
            }
            #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0)
            // A subject with no event is nothing to erase: exit 1, one line.
            let nothing = try sandbox.run(["erase", "--ledger", ledger, "--subject", "kid-zed", "--basis", "other"])
            #expect(nothing.status == 1 && nothing.err.contains("nothing to erase"), "\(nothing)")
            let badBasis = try sandbox.run(["erase", "--ledger", ledger, "--subject", "kid-ava", "--basis", "whim"])
            #expect(badBasis.status == 2, "\(badBasis)")
        }
    }

    @Test("import of an export cut short before an erasure names each line the erasure is missing for, in input order, and writes nothing")
    func importOfAnExportCutShortBeforeItsErasure() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "events.jsonl"))
            try Self.eraseAva(ledger, sandbox)
            let export = String(decoding: try sandbox.export(ledger), as: UTF8.self)
            var lines = Self.lines(export)
            #expect(lines.count == 4 && lines[3].contains("subject.erased"))
            // Cut before the erasure, with a line that does not parse after it: lines 1 and 3 are erased events.
            lines[3] = "{"
            let cut = try sandbox.write(lines.joined(separator: "\n") + "\n", to: "cut.jsonl")
            let run = try sandbox.run(["import", "--ledger", sandbox.path("copy"), cut])
            #expect(run.status == 1, "\(run)")
            #expect(run.errorLines.map { $0.prefix(cut.count + 3) } == ["\(cut):1:", "\(cut):3:", "\(cut):4:", "rejected: nothing was written"], "\(run)")
            #expect(run.errorLines.first?.contains("handles.observed: erased: the event is given erased (by seq 4, guardianRequest), but no erasure") == true)
            // Over two files, with blank lines: each line still by its file and number.
            let first = try sandbox.write("\n" + lines[0] + "\n\n\n", to: "first.jsonl")
            let later = #"{"type":"permission.changed","id":"p","subject":"kid-ben","occurredAt":"2026-11-20T12:30:00Z","permission":"camera","state":"denied"}"#
            let second = try sandbox.write(lines[1] + "\n\n" + lines[2] + "\n" + later + "\n", to: "second.jsonl")
            let split = try sandbox.run(["import", "--ledger", sandbox.path("copy"), first, second])
            #expect(split.errorLines.map { $0.prefix(while: { $0 != " " }) } == ["\(first):2:", "\(second):3:", "rejected:"], "\(split)")
            let whole = try sandbox.run(["import", "--ledger", sandbox.path("copy"), try sandbox.write(export, to: "whole.jsonl")])
            #expect(whole.status == 0, "\(whole)")
        }
    }

    @Test("an import that stops early on too many bad lines does not blame erased lines whose erasure it did not read")
    func importStoppedEarlyDoesNotBlameErasedLines() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "events.jsonl"))
            try Self.eraseAva(ledger, sandbox)
            let lines = Self.lines(String(decoding: try sandbox.export(ledger), as: UTF8.self))
            #expect(lines.count == 4 && lines[0].contains("\"commitment\""))
            let file = try sandbox.write((lines.prefix(3) + Array(repeating: "{", count: 101) + lines.suffix(1)).joined(separator: "\n") + "\n", to: "bad.jsonl")
            let run = try sandbox.run(["import", "--ledger", sandbox.path("copy"), file])
            #expect(run.status == 1, "\(run)")
            #expect(run.errorLines.count == 102 && run.errorLines.first?.hasPrefix("\(file):4: ") == true, "\(run)")
            #expect(!run.err.contains("erased: the event"), "\(run)")
        }
    }

    @Test("after events it already holds, an import cut short before an erasure names every rejected line by its place")
    func importAfterDuplicatesNamesEveryLine() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let short = Self.lines(String(decoding: try sandbox.export(ledger), as: UTF8.self))
            try Self.eraseAva(ledger, sandbox)
            let long = Self.lines(String(decoding: try sandbox.export(ledger), as: UTF8.self))
            let copy = try sandbox.ledger(importing: try sandbox.write(short.prefix(600).joined(separator: "\n") + "\n", to: "short.jsonl"), named: "copy")
            let cut = try sandbox.write(long.prefix(1200).joined(separator: "\n") + "\n", to: "cut.jsonl")
            let run = try sandbox.run(["import", "--ledger", copy, cut])
            #expect(run.status == 1, "\(run)")
            // kid-ava's erased lines after the first 600, each by its line.
            let expected = (600..<1200).filter { long[$0].contains("\"commitment\"") }.map { "\(cut):\($0 + 1):" }
            #expect(expected.count > 30 && expected.count < 100)
            #expect(run.errorLines.dropLast().map { String($0.prefix(while: { $0 != " " })) } == expected, "\(run)")
            #expect(String(decoding: try sandbox.export(copy), as: UTF8.self) == short.prefix(600).joined(separator: "\n") + "\n")
        }
    }

    @Test("--before and --occurred-at take a time only: a bad one is exit 2, one line, which offers no seq:N")
    func aBadTimeIsUsage() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "events.jsonl"))
            let before = try sandbox.export(ledger)
            for bad in ["yesterday", "seq:5", "2026-11-20T12:00"] {
                for command in [["retain", "--ledger", ledger, "--before", bad, "--dry-run"],
                                ["retain", "--ledger", ledger, "--before", bad],
                                ["erase", "--ledger", ledger, "--subject", "kid-ava", "--basis", "other", "--before", bad],
                                ["erase", "--ledger", ledger, "--subject", "kid-ava", "--basis", "other", "--occurred-at", bad]] {
                    let run = try sandbox.run(command)
                    #expect(run.status == 2 && run.errorLines.count == 1, "\(run)")
                    #expect(run.err.contains(bad) && run.err.contains("2026-11-20T") && !run.err.contains("seq:N"), "\(run)")
                }
            }
            #expect(try sandbox.export(ledger) == before)
        }
    }

    @Test("retain erases what every subject recorded before WHEN, lists it in a dry run, and erases nothing more when run again")
    func retainIsIdempotent() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "events.jsonl"))
            let dry = try sandbox.run(["retain", "--ledger", ledger, "--before", "2026-11-20T11:00:00Z", "--dry-run", "--format", "json"])
            #expect(dry.status == 0, "\(dry)")
            #expect(dry.out.hasPrefix(#"{"retained":{"before":"2026-11-20T11:00:00Z","subjects":2,"events":2,"fields":4,"dryRun":true,"#), "\(dry.out)")
            #expect(try sandbox.run(["stats", "--ledger", ledger, "--format", "json"]).out.contains(#""subject.erased":0"#))

            let run = try sandbox.run(["retain", "--ledger", ledger, "--before", "2026-11-20T11:00:00Z", "--format", "json"])
            #expect(run.status == 0, "\(run)")
            #expect(run.out.hasPrefix(#"{"retained":{"before":"2026-11-20T11:00:00Z","subjects":2,"events":2,"fields":4,"dryRun":false,"#), "\(run.out)")
            let again = try sandbox.run(["retain", "--ledger", ledger, "--before", "2026-11-20T11:00:00Z", "--format", "json"])
            #expect(again.out.hasPrefix(#"{"retained":{"before":"2026-11-20T11:00:00Z","subjects":0,"events":0,"fields":0,"#), "\(again.out)")
            let export = try sandbox.run(["export", "--ledger", ledger])
            #expect(!export.out.contains("early.friend") && !export.out.contains("ben.friend") && export.out.contains("late.friend"))
            #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0)
        }
    }

    @Test("erase, retain and rebuild on a path with no ledger are exit 3, one line, and make nothing there")
    func aMistypedLedgerIsNotMade() throws {
        try withSandbox { sandbox in
            let empty = sandbox.path("empty")
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
            for path in [sandbox.path("typo"), empty] {
                for command in [["erase", "--ledger", path, "--subject", "kid-ava", "--basis", "guardianRequest"],
                                ["retain", "--ledger", path, "--before", "2026-11-20T11:00:00Z"],
                                ["retain", "--ledger", path, "--before", "2026-11-20T11:00:00Z", "--dry-run"],
                                ["rebuild", "--ledger", path]] {
                    let run = try sandbox.run(command)
                    #expect(run.status == 3 && run.errorLines.count == 1 && run.err.contains(path), "\(run)")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.path("typo")))
            #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        }
    }
}
