import Foundation
import Testing

/// The README's audit recipes that filter the tool's output, run as written against a ledger where a text
/// search would go wrong: a subject named `inPerson` and a handle named `true`.
@Suite("README audit recipes", .timeLimit(.minutes(10)), .enabled(if: Python.available, "needs python3"))
struct ReadmeRecipeTests {
    /// A question of the subject `inPerson` about the handle `true`, approved on time via messages.
    static let misleading = """
        {"type":"question.asked","id":"rx-01","subject":"inPerson","occurredAt":"2026-11-21T09:00:00Z","recordedAt":"2026-11-21T09:00:01Z","question":{"id":"6A3F1C2E-00AA-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"true","kind":"custom"}}],"actions":["message"]}}}}
        {"type":"question.answered","id":"rx-02","subject":"inPerson","occurredAt":"2026-11-21T09:05:00Z","recordedAt":"2026-11-21T09:05:01Z","questionId":"6A3F1C2E-00AA-4000-8000-000000000001","choiceId":"approve","via":"messages"}

        """

    /// The commands of the README's recipe row that begins with `question`, as a shell reads them.
    static func recipe(_ question: String) throws -> [String] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let row = try #require(readme.components(separatedBy: "\n").first { $0.hasPrefix("| \(question)") }, "no recipe \(question)")
        let cell = row.components(separatedBy: " | ").dropFirst().joined(separator: " | ")
        // Code spans are between backticks; in a table, a `|` of the shell is written `\|`.
        return cell.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            .filter { $0.hasPrefix("permission-ledger ") }
            .map { $0.replacingOccurrences(of: "\\|", with: "|") }
    }

    /// Runs `command` with `sh -c`, the tool on `PATH` and `PERMISSION_LEDGER` set; its standard output.
    static func shell(_ command: String, ledger: String, in sandbox: Sandbox) throws -> String {
        let tool = try #require(Tool.executable)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = tool.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["PERMISSION_LEDGER"] = ledger
        environment["PERMISSION_LEDGER_FORMAT"] = nil
        process.environment = environment
        process.currentDirectoryURL = sandbox.workingDirectory
        let output = sandbox.path("recipe.out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? handle.close() }
        process.standardOutput = handle
        try spawn(process)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(command) exited \(process.terminationStatus)")
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    @Test("approvals given in person and late answers: exactly those questions, whatever subjects and handles are called")
    func inPersonAndLate() throws {
        try withSandbox { sandbox in
            let extra = try sandbox.write(Self.misleading, to: "misleading.jsonl")
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"), extra)
            let questions = try sandbox.json(["questions", "--ledger", ledger]).objects("questions")
            let inPerson = questions.filter { $0.string("state") == "approved" && $0.string("via") == "inPerson" }.compactMap { $0.string("id") }
            let late = questions.filter { $0.bool("late") == true }.compactMap { $0.string("id") }
            try #require(!inPerson.isEmpty && !late.isEmpty, "the fixture has both")

            let commands = try Self.recipe("Which approvals were given in person?")
            try #require(commands.count == 2, "\(commands)")
            let found = try commands.map { try Self.shell($0, ledger: ledger, in: sandbox).split(separator: "\n").map(String.init) }
            #expect(found[0] == inPerson)
            #expect(found[1] == late)
        }
    }
}
