import Foundation
import Testing

/// The README's commands and code samples, run as written: the set-up's demo and the tour of the tool here;
/// each Swift sample in `Tests/PermissionLedgerTestingTests/ReadmeSampleTests.swift`, which holds them
/// verbatim (a test here checks that it still does).
@Suite(.timeLimit(.minutes(10))) struct ReadmeTests {
    /// A fenced code block of the README.
    struct Block {
        var language: String
        var lines: [String]
        /// The line of the README the block's first line is on.
        var line: Int
    }

    static let readme = packageRoot.appendingPathComponent("README.md")

    static func blocks(_ language: String) throws -> [Block] {
        let lines = try String(contentsOf: readme, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var open: Block?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed == "```" {
                    if block.language == language { blocks.append(block) }
                    open = nil
                } else {
                    block.lines.append(line)
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = Block(language: String(trimmed.dropFirst(3)), lines: [], line: index + 2)
            }
        }
        return blocks
    }

    /// The set-up commands: the shell blocks that name `Tools/test.sh` or `Tools/demo.sh`.
    static func isSetUp(_ block: Block) -> Bool {
        block.lines.contains { $0.contains("Tools/test.sh") || $0.contains("Tools/demo.sh") }
    }

    /// The blocks that run the repository's own scripts, from its root.
    static func runsScripts(_ block: Block) -> Bool {
        !isSetUp(block) && block.lines.contains { $0.hasPrefix("Tools/") }
    }

    /// The lines a comment says a command prints: `#   text`, where `…` stands for anything.
    static func expectedOutput(of blocks: [Block]) -> [(line: Int, text: String)] {
        blocks.flatMap { block in
            block.lines.enumerated().compactMap { offset, line -> (Int, String)? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("#   ") else { return nil }
                return (block.line + offset, String(trimmed.dropFirst(4)).trimmingCharacters(in: .whitespaces))
            }
        }
    }

    /// Whether `output` has a line holding `expected`'s parts in order (`…` matches anything).
    static func output(_ output: String, shows expected: String) -> Bool {
        let parts = expected.components(separatedBy: "…").filter { !$0.isEmpty }
        return output.components(separatedBy: "\n").contains { line in
            var rest = line[...]
            for part in parts {
                guard let range = rest.range(of: part) else { return false }
                rest = rest[range.upperBound...]
            }
            return true
        }
    }

    @Test("the README's set-up commands are the two of Tools/, and its demo runs and prints an audit")
    func setUp() throws {
        let setUp = try Self.blocks("sh").filter(Self.isSetUp)
        let commands = setUp.flatMap(\.lines).map { $0.split(separator: "#")[0].trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        #expect(commands == ["Tools/demo.sh", "Tools/test.sh"])
        // Tools/test.sh is what runs this test; the demo runs here with the tool this test run built.
        let tool = try #require(Tool.executable)
        try withSandbox { sandbox in
            let ledger = sandbox.path("demo-ledger")
            let run = try runScript(
                "Tools/demo.sh Fixtures/family-day.jsonl \(ledger)", in: packageRoot, sandbox: sandbox,
                environment: ["PERMISSION_LEDGER_TOOL": tool.path])
            #expect(run.status == 0, "\(run.output)")
            #expect(Self.output(run.output, shows: "imported 1200 events, 0 duplicates; head seq 1200"), "\(run.output)")
            #expect(Self.output(run.output, shows: "ok: 1200 events, head "), "\(run.output)")
            #expect(FileManager.default.fileExists(atPath: ledger + "-reports/index.html"), "\(run.output)")
        }
    }

    @Test("the tour runs as written, with the tool on PATH, and prints what its comments say")
    func tour() throws {
        let tour = try Self.blocks("sh").filter { !Self.isSetUp($0) && !Self.runsScripts($0) }
        try #require(!tour.isEmpty)
        let tool = try #require(Tool.executable)
        try withSandbox { sandbox in
            try FileManager.default.createSymbolicLink(
                at: sandbox.workingDirectory.appendingPathComponent("Fixtures"),
                withDestinationURL: packageRoot.appendingPathComponent("Fixtures"))
            let script = tour.map { $0.lines.joined(separator: "\n") }.joined(separator: "\n")
            let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let run = try runScript(
                script, in: sandbox.workingDirectory, sandbox: sandbox,
                environment: ["PATH": tool.deletingLastPathComponent().path + ":" + path])
            #expect(run.status == 0, "\(run.output)")
            for expected in Self.expectedOutput(of: tour) {
                #expect(Self.output(run.output, shows: expected.text), "README.md:\(expected.line): \(expected.text)\n\(run.output)")
            }
        }
    }

    @Test("the README's script blocks run as written from the repository's root, with the tool on PATH")
    func scripts() throws {
        let blocks = try Self.blocks("sh").filter(Self.runsScripts)
        try #require(!blocks.isEmpty)
        let tool = try #require(Tool.executable)
        try withSandbox { sandbox in
            let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            for block in blocks {
                let run = try runScript(
                    block.lines.joined(separator: "\n"), in: packageRoot, sandbox: sandbox,
                    environment: ["PATH": tool.deletingLastPathComponent().path + ":" + path])
                #expect(run.status == 0, "README.md:\(block.line):\n\(run.output)")
                for expected in Self.expectedOutput(of: [block]) {
                    #expect(Self.output(run.output, shows: expected.text), "README.md:\(expected.line): \(expected.text)\n\(run.output)")
                }
            }
        }
    }

    static let samplesFile = packageRoot.appendingPathComponent("Tests/PermissionLedgerTestingTests/ReadmeSampleTests.swift")

    @Test("every Swift sample of the README stands as written in ReadmeSampleTests.swift, where it is compiled and run")
    func swiftSamplesAreTestedAsWritten() throws {
        let samples = try Self.blocks("swift")
        #expect(samples.count >= 2)
        let here = try String(contentsOf: Self.samplesFile, encoding: .utf8).components(separatedBy: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        for sample in samples {
            let trimmed = sample.lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            // The file imports what the samples import, once, at its top; the rest stands as written, line by line.
            let imports = trimmed.filter { $0.hasPrefix("import ") }
            #expect(imports.allSatisfy(here.contains), "README.md:\(sample.line): \(imports)")
            let lines = trimmed.filter { !$0.hasPrefix("import ") }
            let found = here.indices.contains { start in
                var index = start
                for line in lines {
                    while index < here.count, here[index].isEmpty { index += 1 }
                    guard index < here.count, here[index] == line else { return false }
                    index += 1
                }
                return true
            }
            #expect(found, "README.md:\(sample.line): this Swift sample is not in ReadmeSampleTests.swift as written")
        }
    }
}

/// The combined output and exit status of a bash script.
private struct ScriptRun {
    var status: Int32
    var output: String
}

private func runScript(_ script: String, in directory: URL, sandbox: Sandbox, environment: [String: String]) throws -> ScriptRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-euo", "pipefail", "-c", script]
    process.currentDirectoryURL = directory
    var merged = ProcessInfo.processInfo.environment
    merged["PERMISSION_LEDGER"] = nil
    merged["PERMISSION_LEDGER_FORMAT"] = nil
    merged["TMPDIR"] = sandbox.temporaryDirectory.path
    for (key, value) in environment { merged[key] = value }
    process.environment = merged
    let outputPath = sandbox.path("script-\(UUID().uuidString).out")
    try Data().write(to: URL(fileURLWithPath: outputPath))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    try spawn(process)
    process.waitUntilExit()
    try handle.close()
    let output = try String(contentsOfFile: outputPath, encoding: .utf8)
    return ScriptRun(status: process.terminationStatus, output: output)
}
