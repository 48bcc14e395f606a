import Foundation
import PermissionLedger
import Testing

/// `bundle` and `verify-bundle` (docs/spec/PROOFS.md): one family-day child's bundle, checked end to end by the
/// commands of its own README (Go's sumdb/note and sumdb/tlog, Python's standard library) and by `verify-bundle`.
@Suite("audit bundles", .timeLimit(.minutes(10)))
struct AuditBundleTests {
    @Test("a child's bundle passes its README's third-party commands and verify-bundle, and holds nothing of another child")
    func bundleChecksOut() throws {
        try withBundle { sandbox, _, bundle, vkey in
            let checks = try runReadmeCommands(bundle, vkey: vkey, sandbox: sandbox)
            #expect(checks.status == 0, "\(checks.output)")
            #expect(checks.output.contains("ok: the checkpoint of 1200 events is signed by example.com/family-day, and "))
            #expect(checks.output.contains(" events of kid-ben match their leaves, none missing from the first to the last"))
            let verified = try sandbox.run(["verify-bundle", bundle, "--vkey", vkey])
            #expect(verified.status == 0 && verified.out.hasPrefix("ok: "), "\(verified)")

            // Nothing of any other child: their events' ids, and their personal values that kid-ben's events do not hold.
            let events = try Fixture.events("family-day.jsonl")
            let own = Set(events.filter { $0.subject == "kid-ben" }.flatMap(personalValues))
            let others = Set(events.filter { $0.subject != "kid-ben" }.flatMap { personalValues($0) + [$0.id] }).subtracting(own)
            #expect(others.count > 100)
            let files = try FileManager.default.subpathsOfDirectory(atPath: bundle).filter { !$0.hasSuffix("events") }
            for file in files {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: bundle + "/" + file))
                for value in others where value.utf8.count >= 4 {
                    #expect(bytes.range(of: Data(value.utf8)) == nil, "\(file) holds \(value), another child's")
                }
            }
            let modes = try files.map { try FileManager.default.attributesOfItem(atPath: bundle + "/" + $0)[.posixPermissions] as? Int }
            #expect(modes.allSatisfy { $0 == 0o600 || $0 == 0o700 })
        }
    }

    @Test("a changed value, a missing event or a changed checkpoint fails both the README's commands and verify-bundle")
    func tamperedBundlesFail() throws {
        try withBundle { sandbox, _, bundle, vkey in
            let seqs = try FileManager.default.contentsOfDirectory(atPath: bundle + "/events")
                .filter { $0.hasSuffix(".json") }.compactMap { UInt64($0.dropLast(5)) }.sorted()
            let asked = try seqs.first { seq in
                try String(contentsOfFile: "\(bundle)/events/\(seq).json", encoding: .utf8).contains("\"question.asked\"")
            }!
            let middle = seqs[seqs.count / 2]
            let tampers: [(String, (String) throws -> Void)] = [
                ("a changed personal value", { copy in
                    let file = "\(copy)/events/\(asked).json"
                    let text = try String(contentsOfFile: file, encoding: .utf8)
                    try text.replacingOccurrences(of: "\"title\":\"Approve\"", with: "\"title\":\"Approvf\"").write(toFile: file, atomically: false, encoding: .utf8)
                }),
                ("a missing event", { copy in
                    for ext in ["json", "leaf", "proof"] { try FileManager.default.removeItem(atPath: "\(copy)/events/\(middle).\(ext)") }
                }),
                ("a changed checkpoint", { copy in
                    let file = "\(copy)/checkpoint"
                    var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
                    bytes[bytes.startIndex + 20] ^= 1
                    try bytes.write(to: URL(fileURLWithPath: file))
                }),
            ]
            for (index, (what, tamper)) in tampers.enumerated() {
                let copy = sandbox.path("tampered-\(index)")
                try FileManager.default.copyItem(atPath: bundle, toPath: copy)
                try tamper(copy)
                let checks = try runReadmeCommands(copy, vkey: vkey, sandbox: sandbox)
                #expect(checks.status != 0 && checks.output.contains("FAILED: "), "\(what): \(checks.output)")
                let verified = try sandbox.run(["verify-bundle", copy, "--vkey", vkey])
                #expect(verified.status == 4 && verified.errorLines.count == 1, "\(what): \(verified)")
            }
        }
    }

    @Test("a file of a bundle that is huge, a FIFO or a device is refused in one line, not read")
    func plantedFilesAreRefused() throws {
        try withBundle { sandbox, _, bundle, vkey in
            let proof = try #require(try FileManager.default.contentsOfDirectory(atPath: bundle + "/events").first { $0.hasSuffix(".proof") })
            let plants: [(file: String, plant: (String) throws -> Void, says: String)] = [
                ("checkpoint", { path in
                    // Sparse: 4 GiB that take no room, which a read of the whole file would try to hold in memory.
                    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                    try handle.truncate(atOffset: 4 << 30)
                    try handle.close()
                }, "checkpoint: 4294967296 bytes, more than any file of a bundle holds"),
                ("events/\(proof)", { path in
                    try FileManager.default.removeItem(atPath: path)
                    #expect(mkfifo(path, 0o600) == 0)
                }, "events/\(proof): not a regular file"),
                ("events/\(proof)", { path in
                    try FileManager.default.removeItem(atPath: path)
                    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
                }, "events/\(proof): not a regular file"),
            ]
            for (index, (file, plant, says)) in plants.enumerated() {
                let copy = sandbox.path("planted-\(index)")
                try FileManager.default.copyItem(atPath: bundle, toPath: copy)
                try plant(copy + "/" + file)
                let verified = try sandbox.run(["verify-bundle", copy, "--vkey", vkey], killAfter: 120)
                #expect(verified.status == 4 && !verified.timedOut, "\(verified)")
                #expect(verified.errorLines.count == 1 && verified.errorLines.first?.contains(says) == true, "\(verified)")
            }
        }
    }

    @Test("a verifier key file that is a FIFO, huge or holds no key is exit 3 with one line, not waited on")
    func plantedVerifierKeys() throws {
        try withBundle { sandbox, _, bundle, _ in
            let fifo = sandbox.path("fifo.vkey")
            #expect(mkfifo(fifo, 0o600) == 0)
            let huge = try sandbox.write("", to: "huge.vkey")
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
            try handle.truncate(atOffset: 1 << 30)
            try handle.close()
            let cases = [
                (fifo, "is not a regular file"), (huge, "is 1073741824 bytes long, not a verifier key"),
                (try sandbox.write("not a key\n", to: "wrong.vkey"), ""), (sandbox.path("missing.vkey"), "cannot be read"),
            ]
            for (vkey, says) in cases {
                let run = try sandbox.run(["verify-bundle", bundle, "--vkey", vkey], killAfter: 120)
                #expect(run.status == 3 && !run.timedOut, "\(run)")
                #expect(run.errorLines.count == 1 && run.errorLines.first?.hasPrefix("--vkey \"\(vkey)\": \(says)") == true, "\(run)")
            }
        }
    }

    @Test("after the child is erased, the earlier bundle still verifies, and a new one proves the erased events' places")
    func erasureChangesNoLeaf() throws {
        try withBundle { sandbox, ledger, bundle, vkey in
            let erase = try sandbox.run(["erase", "--ledger", ledger, "--subject", "kid-ben", "--basis", "guardianRequest"])
            try #require(erase.status == 0, "\(erase)")
            #expect(try sandbox.run(["verify-bundle", bundle, "--vkey", vkey]).status == 0)
            let after = sandbox.path("after")
            let run = try sandbox.run(["bundle", "--ledger", ledger, "--signing-key", sandbox.path("signing.key"), "--subject", "kid-ben", "--out", after])
            try #require(run.status == 0, "\(run)")
            let checks = try runReadmeCommands(after, vkey: vkey, sandbox: sandbox)
            #expect(checks.status == 0, "\(checks.output)")
            #expect(try sandbox.run(["verify-bundle", after, "--vkey", vkey]).status == 0)
            for name in try FileManager.default.contentsOfDirectory(atPath: bundle + "/events") where name.hasSuffix(".leaf") {
                let before = try Data(contentsOf: URL(fileURLWithPath: "\(bundle)/events/\(name)"))
                #expect(try Data(contentsOf: URL(fileURLWithPath: "\(after)/events/\(name)")) == before, "\(name) changed with the erasure")
            }
            let consistency = try sandbox.run(["prove-consistency", "--ledger", ledger, "--signing-key", sandbox.path("signing.key"), "--from", "1200"])
            #expect(consistency.status == 0, "\(consistency)")
        }
    }
}

extension AuditBundleTests {
    @Test("a subject or an origin that holds backticks and HTML is text in the README, as CommonMark's reference implementation renders it",
          .enabled(if: CommonMark.executable != nil, CommonMark.unavailableReason), arguments: [
        "k` <img src=x onerror=alert(1)> `x",
        "``<script>alert(1)</script>``",
        "`a`",
    ])
    func hostileSubjectsStayTextInTheReadme(_ subject: String) throws {
        try withSandbox { sandbox in
            let event = #"{"type":"permission.changed","id":"m-1","subject":"# + JSONString(subject)
                + #","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z","permission":"camera","state":"denied"}"#
            let ledger = try sandbox.ledger(importing: try sandbox.write(event + "\n", to: "hostile.jsonl"))
            let origin = "example.com/`<b>bold</b>`"
            let keygen = try sandbox.run(["keygen", "--origin", origin, "--out", sandbox.path("signing.key")])
            try #require(keygen.status == 0, "\(keygen)")
            let bundle = sandbox.path("bundle")
            let run = try sandbox.run(["bundle", "--ledger", ledger, "--signing-key", sandbox.path("signing.key"), "--subject", subject, "--out", bundle])
            try #require(run.status == 0, "\(run)")

            let html = try CommonMark.html(of: bundle + "/README.md", sandbox: sandbox)
            for injected in ["<img", "<script", "<b>"] { #expect(!html.contains(injected), "\(html)") }
            #expect(html.contains("<code>\(escapedForHTML(subject))</code>"), "\(html)")
            #expect(html.contains("<code>\(escapedForHTML(origin))</code>"), "\(html)")
        }
    }

    @Test("the directory in the check commands is one word of the shell, whatever its name")
    func checkCommandsQuoteTheDirectory() throws {
        try withSandbox { sandbox in
            for name in ["plain-dir", "it's here; touch pwned", "-dash", "$(touch pwned)", "a b\tc"] {
                let directory = sandbox.path("dirs/" + name)
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                // Relative, as a report names its bundle beside it: "-dash" must not be taken for an option.
                let cd = try #require(BundleReadme.checkCommands(directory: name).split(separator: "\n").first { $0.hasPrefix("cd ") })
                let run = try sandbox.run(["-c", cd + " && pwd"], in: URL(fileURLWithPath: sandbox.path("dirs")), program: URL(fileURLWithPath: "/bin/sh"))
                #expect(run.status == 0 && run.out == directory + "\n", "\(name): \(run)")
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.path("dirs/pwned")))
        }
    }
}

/// `value` as a JSON string, quotes included.
private func JSONString(_ value: String) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: [value], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast().description
}

/// `value` as cmark writes text in HTML: `&`, `<`, `>` and `"` as entities.
private func escapedForHTML(_ value: String) -> String {
    value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
}

/// A sandbox with family-day imported, a signing key, the trusted verifier key, and kid-ben's bundle.
private func withBundle(_ body: (Sandbox, String, String, String) throws -> Void) throws {
    try withSandbox { sandbox in
        let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
        let keygen = try sandbox.run(["keygen", "--origin", "example.com/family-day", "--out", sandbox.path("signing.key")])
        try #require(keygen.status == 0, "\(keygen)")
        let vkey = try sandbox.write(keygen.out, to: "trusted.vkey")
        let bundle = sandbox.path("kid-ben-audit")
        let run = try sandbox.run(["bundle", "--ledger", ledger, "--signing-key", sandbox.path("signing.key"), "--subject", "kid-ben", "--out", bundle])
        try #require(run.status == 0, "\(run)")
        try body(sandbox, ledger, bundle, vkey)
    }
}

/// Runs the shell commands of the bundle's README (its `sh` block), with the bundle's directory and the trusted key
/// in place of THIS-DIRECTORY and TRUSTED-VKEY. The packages its first line installs are installed before, by the
/// build of the Go verifier (`Tools/proof-verifier.sh`), so that line is left out.
private func runReadmeCommands(_ bundle: String, vkey: String, sandbox: Sandbox) throws -> (status: Int32, output: String) {
    _ = try ProofVerifier.executable()
    let readme = try String(contentsOfFile: bundle + "/README.md", encoding: .utf8)
    let block = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
    let commands = block.split(separator: "\n").filter { !$0.hasPrefix("sudo apt-get install") }
        .map { $0.replacingOccurrences(of: "THIS-DIRECTORY", with: bundle).replacingOccurrences(of: "TRUSTED-VKEY", with: vkey) }
    let script = try sandbox.write("set -e\n" + commands.joined(separator: "\n") + "\n", to: "readme-commands-\(UUID().uuidString).sh")
    let run = try sandbox.run([script], environment: ["GOCACHE": sandbox.path("gocache"), "HOME": sandbox.path("home")], program: URL(fileURLWithPath: "/bin/sh"))
    return (run.status, run.out + run.err)
}

/// The personal values of an event, as the fixture gives them.
private func personalValues(_ event: PermissionEvent) -> [String] {
    switch event.payload {
    case .questionAsked(let question):
        var values = question.choices.map(\.title)
        switch question.topic {
        case .communication(let topic): values += topic.personInformation.map(\.handle.value)
        case .significantAppUpdate(let update): values.append(update.description)
        }
        return values
    case .handlesObserved(let checked, let known): return (checked + known).map(\.value)
    case .questionAskFailed(_, let error): return error.message.map { [$0] } ?? []
    default: return []
    }
}
