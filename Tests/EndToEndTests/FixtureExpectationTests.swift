import Foundation
import Testing

/// The expected results of the fixture library, checked with the real tool: what `Tools/check-fixtures.sh`
/// checks from the shell.
///
/// - Every valid fixture `NAME.jsonl` has `NAME.expected` beside it: JSON Lines, one check a line,
///   `{"args":[…],"output":{…}}` (optionally `"ignore":[KEY,…]`), the first being `["digest"]` at the head.
///   Each check runs `permission-ledger ARGS… --ledger L --format json` against a ledger holding the fixture
///   alone, and its output must equal `output` as a JSON value. `replay NAME.jsonl --expect-digest HEX` must
///   accept the head digest. `Tools/Fixtures/make_expected.py` writes these files; review what it writes.
/// - Every invalid fixture has a `# error: LINE: MESSAGE` header: the first line `import` writes to standard
///   error, after `FILE:`, both into an empty ledger and into one holding the file's good prefix (which the
///   rejected import must leave unchanged).
@Suite("fixture expectations", .timeLimit(.minutes(10)))
struct FixtureExpectationTests {
    /// One check of an expected file.
    struct Check: CustomStringConvertible {
        var line: Int
        var args: [String]
        var output: Any
        var ignore: [String]

        var description: String { "line \(line): \(args.joined(separator: " "))" }
    }

    /// The valid fixtures (`*.jsonl` directly in `Fixtures/`), by name without `.jsonl`.
    static let validNames: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Fixture.directory.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.map { String($0.dropLast(".jsonl".count)) }.sorted()
    }()

    /// The expected files in `Fixtures/`, by fixture name.
    static let expectedNames: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Fixture.directory.path)) ?? []
        return names.filter { $0.hasSuffix(".expected") }.map { String($0.dropLast(".expected".count)) }.sorted()
    }()

    static func checks(of name: String) throws -> [Check] {
        let text = try Fixture.text("\(name).expected")
        var checks: [Check] = []
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let check = try #require(object as? [String: Any], "\(name).expected:\(offset + 1) is not an object")
            let args = try #require(check["args"] as? [String], "\(name).expected:\(offset + 1) has no args")
            let output = try #require(check["output"], "\(name).expected:\(offset + 1) has no output")
            checks.append(Check(line: offset + 1, args: args, output: output, ignore: check["ignore"] as? [String] ?? []))
        }
        return checks
    }

    @Test("every valid fixture has its expected results, and every expected file its fixture")
    func everyFixtureHasExpectedResults() {
        #expect(Self.validNames.count >= 15)
        #expect(Self.validNames == Self.expectedNames)
    }

    @Test("every check of a valid fixture gives the expected output; replay accepts the head digest",
          arguments: expectedNames)
    func expectedResults(_ name: String) throws {
        let checks = try Self.checks(of: name)
        try #require(checks.count >= 4, "\(name).expected has \(checks.count) checks")
        let first = try #require(checks.first)
        try #require(first.args == ["digest"], "the first check of \(name).expected is the digest at the head")
        let digest = try #require((first.output as? [String: Any])?["digest"] as? String)

        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("\(name).jsonl"))
            for check in checks {
                let result = try sandbox.run(check.args + ["--ledger", ledger, "--format", "json"])
                guard result.status == 0, !result.crashed else {
                    Issue.record("\(name).expected \(check): \(result)")
                    continue
                }
                guard var actual = try? JSONSerialization.jsonObject(with: result.stdout) else {
                    Issue.record("\(name).expected \(check): the output is not JSON: \(result)")
                    continue
                }
                var expected = check.output
                if !check.ignore.isEmpty, var a = actual as? [String: Any], var e = expected as? [String: Any] {
                    for key in check.ignore {
                        a[key] = nil
                        e[key] = nil
                    }
                    (actual, expected) = (a, e)
                }
                if let difference = jsonDifference(expected, actual) {
                    Issue.record("\(name).expected \(check): \(difference)\n\(result.out)")
                }
            }

            let replay = try sandbox.run(["replay", Fixture.path("\(name).jsonl"), "--expect-digest", digest])
            #expect(replay.status == 0, "replay --expect-digest: \(replay)")
        }
    }

    @Test("every invalid fixture is rejected with its # error: line, and nothing is written",
          arguments: Fixture.invalidNames)
    func expectedError(_ name: String) throws {
        let file = Fixture.path("invalid/\(name)")
        let text = try Fixture.text("invalid/\(name)")
        let error = try #require(Fixture.header("error", in: text), "\(name) has no # error: header")
        let want = "\(file):\(error)"

        try withSandbox { sandbox in
            // Into an empty ledger.
            let empty = try sandbox.run(["import", "--ledger", sandbox.path("empty"), file])
            #expect(empty.status == 1, "\(empty)")
            #expect(empty.errorLines.first == want, "\(empty)")

            // Into a ledger that holds every line before the bad one: the same rejection, nothing written.
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.last == "" { lines.removeLast() }
            let prefix = try sandbox.write(lines.dropLast().map { $0 + "\n" }.joined(), to: "prefix.jsonl")
            let ledger = try sandbox.ledger(importing: prefix)
            let before = try sandbox.export(ledger)
            let again = try sandbox.run(["import", "--ledger", ledger, file])
            #expect(again.status == 1, "\(again)")
            #expect(again.errorLines.first == want, "\(again)")
            #expect(try sandbox.export(ledger) == before, "the rejected import changed the ledger")
        }
    }
}

/// Where two JSON values (as `JSONSerialization` reads them) first differ, or nil when they are equal.
/// Booleans and numbers are told apart (`true` is not `1`), and objects compare regardless of key order.
func jsonDifference(_ expected: Any, _ actual: Any, at path: String = "") -> String? {
    func shown(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject([value]),
              let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .fragmentsAllowed])
        else { return "\(value)" }
        let text = String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
        return text.count > 160 ? String(text.prefix(160)) + "…" : text
    }
    let place = path.isEmpty ? "output" : path
    func isBool(_ value: Any) -> Bool {
        // JSONSerialization reads true and false as NSNumbers of type char, on Darwin and Linux alike.
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }
    switch (expected, actual) {
    case let (e as [String: Any], a as [String: Any]):
        for key in e.keys.sorted() {
            guard let value = a[key] else { return "\(path).\(key): missing" }
            if let difference = jsonDifference(e[key]!, value, at: "\(path).\(key)") { return difference }
        }
        if let extra = a.keys.sorted().first(where: { e[$0] == nil }) {
            return "\(path).\(extra): not expected (\(shown(a[extra]!)))"
        }
        return nil
    case let (e as [Any], a as [Any]):
        for (index, (x, y)) in zip(e, a).enumerated() {
            if let difference = jsonDifference(x, y, at: "\(path)[\(index)]") { return difference }
        }
        return e.count == a.count ? nil : "\(place): expected \(e.count) items, got \(a.count)"
    case (is NSNull, is NSNull):
        return nil
    case let (e as String, a as String):
        return e == a ? nil : "\(place): expected \(shown(e)), got \(shown(a))"
    case let (e as NSNumber, a as NSNumber):
        return isBool(e) == isBool(a) && e == a ? nil : "\(place): expected \(shown(e)), got \(shown(a))"
    default:
        return "\(place): expected \(shown(expected)), got \(shown(actual))"
    }
}
