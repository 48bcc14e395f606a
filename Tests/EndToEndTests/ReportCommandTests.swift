import Foundation
import PermissionLedger
import Testing

/// `permission-ledger report` (docs/REPORTS.md): what the file says agrees with the tool's own queries, several
/// children get an index, the bundle beside it checks out, and bad requests get a plain error.
@Suite("report command", .timeLimit(.minutes(10)))
struct ReportCommandTests {
    /// The values of `attribute` on the elements of `html` that have it, in order.
    static func attributeValues(_ attribute: String, in html: some StringProtocol) -> [String] {
        let pattern = try! Regex("\(attribute)=\"([^\"]*)\"")
        return String(html).matches(of: pattern).map { String($0.output[1].substring!) }
    }

    /// The part of `html` between the first `start` and the next `end`.
    static func part(_ html: String, from start: String, to end: String) throws -> Substring {
        let lower = try #require(html.range(of: start))
        let upper = try #require(html.range(of: end, range: lower.upperBound..<html.endIndex))
        return html[lower.upperBound..<upper.lowerBound]
    }

    @Test("family-day's busiest child: the report agrees with known-handles, questions and permissions at several points")
    func agreesWithTheQueries() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            for point in ["seq:150", "seq:600", "2026-11-20T15:00:00Z", "seq:1200"] {
                let file = sandbox.path("report-\(point.replacingOccurrences(of: ":", with: "-")).html")
                let run = try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-ben", "--as-of", point, "--out", file])
                try #require(run.status == 0, "\(run)")
                let html = try String(contentsOfFile: file, encoding: .utf8)

                // Known at the end of the period (the point): the summary's card.
                let card = try Self.part(html, from: "<h3>Known at the end</h3>", to: "</ul>")
                let shownKnown = zip(Self.attributeValues("data-kind", in: card), Self.attributeValues("data-handle", in: card)).map { "\($0) \($1)" }
                let known = try sandbox.run(["known-handles", "--ledger", ledger, "--subject", "kid-ben", "--as-of", point, "--format", "json"]).json()
                let expectedKnown = (known["handles"] as? [[String: Any]] ?? []).map { "\($0["kind"]!) \($0["value"]!)" }
                #expect(shownKnown == expectedKnown, "known at \(point)")

                // The questions and their states.
                let table = try Self.part(html, from: "<section id=\"questions\"", to: "</section>")
                let rows = try Regex(#"<tr data-state="([a-zA-Z]+)"><td>[^<]*</td><td><code>([0-9A-F-]+)</code>"#)
                let shownQuestions = Dictionary(uniqueKeysWithValues: String(table).matches(of: rows).map {
                    (String($0.output[2].substring!), String($0.output[1].substring!))
                })
                let questions = try sandbox.run(["questions", "--ledger", ledger, "--subject", "kid-ben", "--as-of", point, "--format", "json"]).json()
                let expectedQuestions = Dictionary(uniqueKeysWithValues: (questions["questions"] as? [[String: Any]] ?? []).map { ($0["id"] as! String, $0["state"] as! String) })
                #expect(shownQuestions == expectedQuestions, "questions at \(point)")
                #expect(!expectedQuestions.isEmpty)

                // The state each permission is in at the point: its lane's last bar, the one still holding.
                let timeline = try Self.part(html, from: "id=\"timeline-chart\"", to: "</svg>")
                var shownPermissions: [String: String] = [:]
                for lane in timeline.components(separatedBy: "<g class=\"lane permission\"").dropFirst() {
                    let name = try #require(Self.attributeValues("data-permission", in: lane).first)
                    let holding = lane.components(separatedBy: "<g class=\"bar state-").dropFirst().filter { $0.prefix { $0 != "\"" }.hasSuffix(" holds") }
                    #expect(holding.count == 1, "\(name) at \(point)")
                    shownPermissions[name] = holding.first.map { String($0.prefix { $0 != " " }) }
                }
                let permissions = try sandbox.run(["permissions", "--ledger", ledger, "--subject", "kid-ben", "--as-of", point, "--format", "json"]).json()
                let expectedPermissions = Dictionary(uniqueKeysWithValues: (permissions["permissions"] as? [[String: Any]] ?? []).map { ($0["permission"] as! String, $0["state"] as! String) })
                #expect(shownPermissions == expectedPermissions, "permissions at \(point)")
            }
        }
    }

    @Test("--all writes one owner-only report per child and an index linking each, with safe file names")
    func allChildrenAndAnIndex() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"), try sandbox.write(HostileReport.fixture, to: "hostile.jsonl"))
            let before = try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb"))
            let directory = sandbox.path("reports")
            let run = try sandbox.run(["report", "--ledger", ledger, "--all", "--out", directory])
            try #require(run.status == 0, "\(run)")
            let subjects = try sandbox.run(["stats", "--ledger", ledger, "--format", "json"]).json()["subjects"] as? Int
            let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
            #expect(files.count == (subjects ?? 0) + 1 && files.contains("index.html"), "\(files)")
            #expect(files.allSatisfy { $0.range(of: #"^(index|[0-9]{3}-[A-Za-z0-9._-]+)\.html$"#, options: .regularExpression) != nil }, "\(files)")
            for file in files {
                let mode = try FileManager.default.attributesOfItem(atPath: directory + "/" + file)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
            }
            let index = try String(contentsOfFile: directory + "/index.html", encoding: .utf8)
            let links = Self.attributeValues("href", in: index)
            #expect(Set(links) == Set(files.filter { $0 != "index.html" }), "\(links)")
            #expect(index.contains("kid-&lt;b&gt;bold&lt;/b&gt;&quot;&#39;&amp;") && !index.contains("<b>bold"))
            // A reading command: the ledger's data file is byte for byte what it was.
            #expect(try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb")) == before)
            // Again into the same, now full, directory: refused, and nothing written.
            let again = try sandbox.run(["report", "--ledger", ledger, "--all", "--out", directory])
            #expect(again.status != 0 && again.errorLines.count == 1, "\(again)")
        }
    }

    @Test("with a signing key, the signed checkpoint is in the report and the bundle beside it passes verify-bundle")
    func signedWithABundle() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let keygen = try sandbox.run(["keygen", "--origin", "example.com/family-day", "--out", sandbox.path("signing.key")])
            try #require(keygen.status == 0, "\(keygen)")
            let vkey = try sandbox.write(keygen.out, to: "trusted.vkey")
            let file = sandbox.path("kid-cleo.html")
            let run = try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-cleo", "--signing-key", sandbox.path("signing.key"),
                                       "--verify", "--out", file])
            try #require(run.status == 0, "\(run)")
            let html = try String(contentsOfFile: file, encoding: .utf8)
            #expect(html.contains("example.com/family-day\n1200\n"))
            #expect(html.contains("<span class=\"status ok\">Intact</span>"))
            #expect(html.contains("<span class=\"status ok\">Checked</span>: all "))
            #expect(html.contains("cd kid-cleo.bundle"))
            let verified = try sandbox.run(["verify-bundle", sandbox.path("kid-cleo.bundle"), "--vkey", vkey])
            #expect(verified.status == 0, "\(verified)")

            // Without a key: no bundle, and the report says how to get one.
            let unsigned = sandbox.path("unsigned.html")
            #expect(try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-cleo", "--out", unsigned]).status == 0)
            let text = try String(contentsOfFile: unsigned, encoding: .utf8)
            #expect(text.contains("made without a signing key") && text.contains("Not verified for this report"))
            #expect(!FileManager.default.fileExists(atPath: sandbox.path("unsigned.bundle")))
        }
    }

    @Test("without --as-of, a period's end is the point the report answers for, its clock included")
    func theEndOfThePeriodIsThePoint() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("time-limited.jsonl"))
            let file = sandbox.path("kid-ben.html")
            // The last event was recorded at 12:00:01; by 10:30, one approval had not lapsed yet, and by 11:30 it had.
            for (end, expected) in [("2026-11-20T10:30:00Z", ["emailAddress aunt.jo@example.net", "custom pixelpal"]),
                                    ("2026-11-20T11:30:00Z", ["emailAddress aunt.jo@example.net"])] {
                let run = try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-ben", "--to", end, "--out", file])
                try #require(run.status == 0, "\(run)")
                let card = try Self.part(try String(contentsOfFile: file, encoding: .utf8), from: "<h3>Known at the end</h3>", to: "</ul>")
                let shown = zip(Self.attributeValues("data-kind", in: card), Self.attributeValues("data-handle", in: card)).map { "\($0) \($1)" }
                #expect(Set(shown) == Set(expected), "\(end)")
                let known = try sandbox.run(["known-handles", "--ledger", ledger, "--subject", "kid-ben", "--as-of", end, "--format", "json"]).json()
                #expect(Set((known["handles"] as? [[String: Any]] ?? []).map { "\($0["kind"]!) \($0["value"]!)" }) == Set(expected))
            }
        }
    }

    @Test("a bad request gets one plain line and writes nothing", arguments: [
        (["--subject", "kid-nobody"], Int32(1)),
        (["--subject", "kid-ben", "--to", "2030-01-01T00:00:00Z", "--as-of", "seq:10"], Int32(1)),
        (["--subject", "kid-ben", "--from", "2026-11-20T18:00:00Z", "--to", "2026-11-20T09:00:00Z"], Int32(2)),
        (["--subject", "kid-ben", "--from", "yesterday"], Int32(2)),
        (["--subject", "kid-ben", "--to", "2999-01-01T00:00:00Z"], Int32(2)),
        (["--subject", "kid-ben", "--all"], Int32(2)),
        ([String](), Int32(2)),
    ])
    func badRequests(arguments: [String], status: Int32) throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let file = sandbox.path("out.html")
            let run = try sandbox.run(["report", "--ledger", ledger, "--out", file] + arguments)
            #expect(run.status == status, "\(run)")
            #expect(run.errorLines.count == 1 || status == 2, "\(run)")
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }
}
