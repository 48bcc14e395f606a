import Foundation
import Testing

/// The digest a command printed: the first 64-digit lowercase hex word on standard output that is not `head`.
private func digest(in run: ToolRun, excluding head: String? = nil) throws -> String {
    let words = run.out.split(whereSeparator: { !$0.isHexDigit }).map(String.init).filter { isLowercaseHex($0) && $0 != head }
    return try #require(words.first, "no digest in \(run)")
}

@Suite("digest and replay", .timeLimit(.minutes(10)))
struct DigestAndReplayCommandTests {
    @Test("the same events in two ledgers give the same digest; other events another")
    func sameEventsSameDigest() throws {
        try withSandbox { sandbox in
            let first = try sandbox.ledger(importing: Fixture.path("late-answer.jsonl"), named: "first")
            let second = try sandbox.ledger(importing: Fixture.path("late-answer.jsonl"), named: "second")
            let other = try sandbox.ledger(importing: Fixture.path("decline.jsonl"), named: "other")

            let a = try sandbox.run(["digest", "--ledger", first])
            let b = try sandbox.run(["digest", "--ledger", second])
            let c = try sandbox.run(["digest", "--ledger", other])
            for result in [a, b, c] { #expect(result.status == 0, "\(result)") }
            #expect(try digest(in: a) == digest(in: b))
            #expect(try digest(in: a) != digest(in: c))

            // The same events imported in two calls.
            let lines = try Fixture.text("late-answer.jsonl").split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0 + "\n" }
            let head = try sandbox.write(lines.prefix(3).joined(), to: "head.jsonl")
            let tail = try sandbox.write(lines.dropFirst(3).joined(), to: "tail.jsonl")
            let pieces = try sandbox.ledger(importing: head, named: "pieces")
            try sandbox.ledger(importing: tail, named: "pieces")
            #expect(try digest(in: try sandbox.run(["digest", "--ledger", pieces])) == digest(in: a))
        }
    }

    @Test("--as-of seq:N gives the digest of a ledger holding only the first N events")
    func asOfSeqMatchesPrefix() throws {
        try withSandbox { sandbox in
            let full = try sandbox.ledger(importing: Fixture.path("time-limited.jsonl"), named: "full")
            let events = try Fixture.text("time-limited.jsonl").split(separator: "\n").filter { !$0.hasPrefix("#") }
            let prefix = try sandbox.write(events.prefix(6).map { $0 + "\n" }.joined(), to: "first-six.jsonl")
            let six = try sandbox.ledger(importing: prefix, named: "six")

            let fullAtSix = try sandbox.run(["digest", "--ledger", full, "--as-of", "seq:6"])
            let sixAtSix = try sandbox.run(["digest", "--ledger", six, "--as-of", "seq:6"])
            let fullAtHead = try sandbox.run(["digest", "--ledger", full, "--as-of", "seq:7"])
            #expect(try digest(in: fullAtSix) == digest(in: sixAtSix), "\(fullAtSix)\n\(sixAtSix)")
            #expect(try digest(in: fullAtSix) != digest(in: fullAtHead), "the 7th event changes the state")
        }
    }

    @Test("replay prints the digest and head that digest and verify give for the imported ledger")
    func replayMatchesImport() throws {
        try withSandbox { sandbox in
            let file = Fixture.path("expiry-by-clock.jsonl")
            let ledger = try sandbox.ledger(importing: file)
            let expected = try digest(in: try sandbox.run(["digest", "--ledger", ledger, "--as-of", "seq:5"]))
            let head = try #require(try sandbox.json(["verify", "--ledger", ledger]).string("head"))

            let replay = try sandbox.run(["replay", file, "--as-of", "seq:5"])
            #expect(replay.status == 0, "\(replay)")
            #expect(try digest(in: replay, excluding: head) == expected)
            #expect(replay.out.contains(head), "replay prints the head hash: \(replay)")

            // Without --as-of, both take the head.
            let plainDigest = try digest(in: try sandbox.run(["digest", "--ledger", ledger]))
            let plainReplay = try sandbox.run(["replay", file])
            #expect(try digest(in: plainReplay, excluding: head) == plainDigest)
        }
    }

    @Test("replay --expect-digest exits 0 when it matches and 5 when it differs")
    func expectDigest() throws {
        try withSandbox { sandbox in
            let file = Fixture.path("late-answer.jsonl")
            let right = try digest(in: try sandbox.run(["digest", "--ledger", try sandbox.ledger(importing: file)]))
            let wrong = String(right.dropLast()) + (right.hasSuffix("0") ? "1" : "0")

            let matching = try sandbox.run(["replay", file, "--expect-digest", right])
            #expect(matching.status == 0, "\(matching)")
            let uppercase = try sandbox.run(["replay", file, "--expect-digest", right.uppercased()])
            #expect(uppercase.status == 0, "hex digits in either case: \(uppercase)")
            let differing = try sandbox.run(["replay", file, "--expect-digest", wrong])
            #expect(differing.status == 5, "\(differing)")
            #expect(!differing.errorLines.isEmpty, "says why: \(differing)")
        }
    }

    @Test("an --expect-digest that is not 64 hex digits is wrong usage (exit 2), not a digest that differs (5)", arguments: [
        "3f2a…", "abc", String(repeating: "g", count: 64), String(repeating: "a", count: 63), String(repeating: "a", count: 65),
        // 61 digits and a fullwidth "ａ" (three bytes): 64 bytes, and Character.isHexDigit takes it.
        String(repeating: "a", count: 61) + "\u{FF41}",
    ])
    func malformedExpectedDigest(_ expected: String) throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(["replay", Fixture.path("late-answer.jsonl"), "--expect-digest", expected])
            #expect(result.status == 2, "\(result)")
            #expect(result.err.contains("64 hexadecimal digits"), "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }

    @Test("--format csv of digest, replay and verify: a header row and one record, the fields of their JSON")
    func csv() throws {
        try withSandbox { sandbox in
            let file = Fixture.path("expiry-by-clock.jsonl")
            let ledger = try sandbox.ledger(importing: file)
            func record(_ arguments: [String]) throws -> [String: String] {
                let run = try sandbox.run(arguments + ["--format", "csv"])
                #expect(run.status == 0, "\(run)")
                let records = try #require(parseCSV(run.out), "not RFC 4180 CSV: \(run)")
                try #require(records.count == 2 && records[0].count == records[1].count, "a header and one record: \(records)")
                return Dictionary(uniqueKeysWithValues: zip(records[0], records[1]))
            }
            let digestJSON = try sandbox.json(["digest", "--ledger", ledger, "--as-of", "seq:5"])
            let digest = try record(["digest", "--ledger", ledger, "--as-of", "seq:5"])
            #expect(digest["digest"] == digestJSON.string("digest"))
            #expect(digest["asOfSeq"] == "5")
            #expect(digest["asOfTime"] == (try digestJSON.object("asOf").string("time")))

            let verifyJSON = try sandbox.json(["verify", "--ledger", ledger])
            let verify = try record(["verify", "--ledger", ledger])
            #expect(verify["ok"] == "true")
            #expect(verify["events"] == verifyJSON.int("events").map(String.init))
            #expect(verify["head"] == verifyJSON.string("head"))
            #expect(verify["damagedSeq"] == "" && verify["problem"] == "")

            let replay = try record(["replay", file, "--as-of", "seq:5"])
            #expect(replay["digest"] == digest["digest"])
            #expect(replay["head"] == verifyJSON.string("head"))
            #expect(replay["events"] == verify["events"])
        }
    }

    @Test("replay leaves no ledger behind, in the working directory or in TMPDIR, even when it rejects the input")
    func replayLeavesNothingBehind() throws {
        try withSandbox { sandbox in
            let good = try sandbox.run(["replay", Fixture.path("approval-messages.jsonl")])
            #expect(good.status == 0, "\(good)")
            let bad = try sandbox.run(["replay", Fixture.path("invalid/broken-json.jsonl")])
            #expect(bad.status == 1, "\(bad)")

            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [])
            #expect(try sandbox.contents(of: sandbox.temporaryDirectory) == [])
        }
    }
}
