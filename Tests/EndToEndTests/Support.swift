import Foundation
import Testing

/// The package's root directory: three levels above this file.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The fixtures of `Fixtures/` (see its README).
enum Fixture {
    static let directory = packageRoot.appendingPathComponent("Fixtures")

    /// The absolute path of a fixture, such as `"late-answer.jsonl"` or `"invalid/broken-json.jsonl"`.
    static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }

    /// The file names in `Fixtures/invalid`, sorted.
    static var invalidNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path("invalid"))) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    /// The value of a `# key: value` header comment.
    static func header(_ key: String, in text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("# \(key):") {
            return line.dropFirst(key.count + 3).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// Every command that reads a ledger and takes `--format`, with arguments that make it read
/// handles-observed.jsonl's ledger and find something.
let queryCommands: [[String]] = [
    ["question", "6A3F1C2E-000D-4000-8000-000000000001"],
    ["questions"],
    ["known-handles", "--subject", "kid-ben"],
    ["permissions", "--subject", "kid-ben", "--require", "camera"],
    ["history", "--subject", "kid-ben", "--from", "seq:2"],
    ["diff", "--from", "seq:1", "--to", "seq:4"],
    ["stats"],
    ["who-approved", "--handle", "robo_rex"],
    ["verify"],
    ["digest"],
]

/// Where the `permission-ledger` executable was built.
enum Tool {
    /// Next to the running test executable or bundle, else in `.build/debug` of the package.
    static let executable: URL? = {
        var directories: [URL] = []
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            directories.append(directory)
            directory = directory.deletingLastPathComponent()
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        directories.append(packageRoot.appendingPathComponent(".build/debug"))
        return directories
            .map { $0.appendingPathComponent("permission-ledger") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}

/// One run of the tool: its arguments, exit status and output.
struct ToolRun: CustomStringConvertible {
    var arguments: [String]
    var status: Int32
    /// Whether the tool died of a signal (a crash) rather than exiting.
    var crashed: Bool
    var stdout: Data
    var stderr: Data
    /// Whether the run was killed for taking longer than its `killAfter`.
    var timedOut = false

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var err: String { String(decoding: stderr, as: UTF8.self) }
    var outLines: [String] { lines(out) }
    var errorLines: [String] { lines(err) }

    private func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    /// Standard output parsed as one JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: stdout, options: [.fragmentsAllowed])
        return try #require(object as? [String: Any], "not a JSON object: \(self)")
    }

    var description: String {
        let shownOut = out.count > 2000 ? String(out.prefix(2000)) + "…" : out
        return "permission-ledger \(arguments.joined(separator: " "))\n"
            + "→ \(crashed ? "signal" : "exit") \(status)\nstdout: \(shownOut)\nstderr: \(err)"
    }
}

/// A fresh temporary directory for one test: ledgers, input files, the tool's working and temporary directories.
struct Sandbox {
    /// The variable that makes the tool draw new secrets from a seed, for tests only (docs/DECISIONS.md).
    static let seedVariable = "PERMISSION_LEDGER_TEST_SEED"
    /// The seed of the fixtures' expected results (Tools/check-fixtures.sh, Tools/Fixtures/make_expected.py).
    static let seed = "permission-ledger fixtures"
    let root: URL

    /// The default ledger path of a test.
    var ledger: String { path("ledger") }
    /// The working directory the tool runs in, empty unless a test puts something there.
    var workingDirectory: URL { root.appendingPathComponent("cwd") }
    /// `TMPDIR` for the tool, so that what it leaves behind there can be seen.
    var temporaryDirectory: URL { root.appendingPathComponent("tmp") }
    private var captures: URL { root.appendingPathComponent("io") }

    fileprivate init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("EndToEndTests-\(UUID().uuidString)")
        for directory in [root, workingDirectory, temporaryDirectory, captures] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
    }

    func path(_ name: String) -> String {
        root.appendingPathComponent(name).path
    }

    /// Writes `text` to a file in the sandbox and returns its path.
    @discardableResult
    func write(_ text: String, to name: String) throws -> String {
        let file = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Runs the tool with no standard input (unless `stdin` names a file to read it from) and an environment
    /// without `PERMISSION_LEDGER` (unless `environment` sets it). A `launcher` (such as `prlimit` and its
    /// options) runs the tool as its last argument. With `killAfter`, a run still going after that many
    /// seconds is killed (with SIGKILL) and marked ``ToolRun/timedOut``: a safety net that turns a hang into
    /// a failure, not a timing assertion. `program` runs another executable of the package instead of the tool.
    @discardableResult
    func run(
        _ arguments: [String], stdin: String? = nil, in directory: URL? = nil, environment: [String: String] = [:],
        launcher: [String] = [], killAfter timeout: TimeInterval? = nil, program: URL? = nil
    ) throws -> ToolRun {
        let executable: URL = try #require(program ?? Tool.executable, "permission-ledger was not built: run swift build --build-tests")
        let command = launcher.isEmpty ? [executable.path] + arguments : launcher + [executable.path] + arguments
        var variables = ProcessInfo.processInfo.environment
        variables["PERMISSION_LEDGER"] = nil
        variables["TMPDIR"] = temporaryDirectory.path
        // New ledgers' keys and salts from a fixed seed (tests only): the same input gives the same ledger.
        variables[Sandbox.seedVariable] = Sandbox.seed
        variables.merge(environment) { _, new in new }

        // Files rather than pipes: a large export cannot fill a pipe and block the tool.
        let name = UUID().uuidString
        let outURL = captures.appendingPathComponent("\(name).out")
        let errURL = captures.appendingPathComponent("\(name).err")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        let inHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: stdin ?? "/dev/null"))
        defer {
            try? outHandle.close()
            try? errHandle.close()
            try? inHandle.close()
        }
        let child = try ChildProcess.start(
            command[0], Array(command.dropFirst()), environment: variables, directory: (directory ?? workingDirectory).path,
            stdin: inHandle.fileDescriptor, stdout: outHandle.fileDescriptor, stderr: errHandle.fileDescriptor)
        let finished = Flag()
        let killed = Flag()
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                guard !finished.isSet else { return }
                killed.set()
                kill(child.pid, SIGKILL)
            }
        }
        let (status, signal) = child.wait()
        finished.set()
        return ToolRun(
            arguments: arguments, status: status, crashed: signal != nil && !killed.isSet,
            stdout: try Data(contentsOf: outURL), stderr: try Data(contentsOf: errURL), timedOut: killed.isSet)
    }

    /// Imports the files into a ledger (by default ``ledger``), requiring success, and returns its path.
    @discardableResult
    func ledger(importing files: String..., named name: String = "ledger") throws -> String {
        let ledger = path(name)
        let result = try run(["import", "--ledger", ledger] + files)
        try #require(result.status == 0, "\(result)")
        return ledger
    }

    /// The ledger's export, requiring success.
    func export(_ ledger: String, after seq: Int? = nil) throws -> Data {
        let result = try run(["export", "--ledger", ledger] + (seq.map { ["--after", String($0)] } ?? []))
        try #require(result.status == 0, "\(result)")
        return result.stdout
    }

    /// Runs a query with `--format json` and returns its parsed output, requiring success.
    func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(arguments + ["--format", "json"])
        try #require(result.status == 0, "\(result)")
        return try result.json()
    }

    /// The names in a directory of the sandbox.
    func contents(of directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }
}

/// Runs `body` with a fresh sandbox and removes it afterwards.
func withSandbox<T>(_ body: (Sandbox) throws -> T) throws -> T {
    let sandbox = try Sandbox()
    defer { try? FileManager.default.removeItem(at: sandbox.root) }
    return try body(sandbox)
}

/// A fresh sandbox whose default ledger holds the fixture `name` (such as `"late-answer.jsonl"`), imported
/// with the tool: `body` gets the sandbox and the ledger's path.
func withFixtureLedger<T>(_ name: String, _ body: (Sandbox, String) throws -> T) throws -> T {
    try withSandbox { sandbox in try body(sandbox, try sandbox.ledger(importing: Fixture.path(name))) }
}

/// Runs `body`, which blocks for a long time (waiting on child processes), on a thread of its own, so that it
/// does not hold one of the few threads of the cooperative pool that the suite's async tests share (two, on a
/// 2-core machine) for minutes.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// ``withSandbox`` for async bodies.
func withSandboxAsync<T>(_ body: (Sandbox) async throws -> T) async throws -> T {
    let sandbox = try Sandbox()
    defer { try? FileManager.default.removeItem(at: sandbox.root) }
    return try await body(sandbox)
}

/// What `import` reported: events appended, duplicates, and the new head seq.
struct ImportSummary: Equatable, CustomStringConvertible {
    var appended: Int
    var duplicates: Int
    var head: Int

    init(appended: Int, duplicates: Int, head: Int) {
        (self.appended, self.duplicates, self.head) = (appended, duplicates, head)
    }

    /// Reads the summary line, such as `imported 3 events, 3 duplicates; head seq 3`.
    init(_ run: ToolRun) throws {
        let pattern = /(\d+) events?\b\D*?(\d+) duplicates?\b\D*?head seq (\d+)/
        let match = try #require(try pattern.firstMatch(in: run.out), "no import summary in \(run)")
        self.init(appended: Int(match.1)!, duplicates: Int(match.2)!, head: Int(match.3)!)
    }

    var description: String { "\(appended) appended, \(duplicates) duplicates, head seq \(head)" }
}

/// A time as the tool writes it (`2026-11-20T09:00:00Z`, `…T09:00:00.250000Z`), in microseconds since 1970,
/// so that times compare in time order, which their text does not always do.
func microseconds(_ text: String) -> Int64? {
    guard text.hasSuffix("Z") else { return nil }
    let parts = text.dropLast().split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let date = ISO8601DateFormatter().date(from: String(parts[0]) + "Z") else { return nil }
    var fraction: Int64 = 0
    if parts.count == 2 {
        guard parts[1].count <= 6, let digits = Int64(parts[1]) else { return nil }
        fraction = digits * Int64(pow(10, Double(6 - parts[1].count)))
    }
    return Int64(date.timeIntervalSince1970) * 1_000_000 + fraction
}

/// Whether `text` is `count` lowercase hexadecimal digits.
func isLowercaseHex(_ text: String, count: Int = 64) -> Bool {
    text.utf8.count == count && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
}

extension Dictionary where Key == String, Value == Any {
    /// The value at `key` as a nested object.
    func object(_ key: String) throws -> [String: Any] {
        try #require(self[key] as? [String: Any], "\(key) is not an object in \(self)")
    }

    /// The value at `key` as an array of objects.
    func objects(_ key: String) throws -> [[String: Any]] {
        try #require(self[key] as? [[String: Any]], "\(key) is not an array of objects in \(self)")
    }

    func string(_ key: String) -> String? { self[key] as? String }

    func int(_ key: String) -> Int? { (self[key] as? NSNumber)?.intValue }

    func bool(_ key: String) -> Bool? { self[key] as? Bool }

    /// Whether the value at `key` is JSON `null` (present, not missing).
    func isNull(_ key: String) -> Bool { self[key] is NSNull }
}

/// The records of RFC 4180 CSV text (CRLF line breaks, quoted fields with doubled quotes), or nil when malformed.
func parseCSV(_ text: String) -> [[String]]? {
    var records: [[String]] = []
    var record: [String] = []
    var field = ""
    var quoted = false
    var characters = Array(text.unicodeScalars)[...]
    while let c = characters.popFirst() {
        if quoted {
            if c == "\"" {
                if characters.first == "\"" {
                    field.unicodeScalars.append(characters.removeFirst())
                } else {
                    quoted = false
                }
            } else {
                field.unicodeScalars.append(c)
            }
        } else if c == "\"" {
            guard field.isEmpty else { return nil }
            quoted = true
        } else if c == "," {
            record.append(field)
            field = ""
        } else if c == "\r" {
            guard characters.popFirst() == "\n" else { return nil }
            record.append(field)
            records.append(record)
            record = []
            field = ""
        } else {
            field.unicodeScalars.append(c)
        }
    }
    guard !quoted, field.isEmpty, record.isEmpty else { return nil }
    return records
}

/// A flag set once, read from anywhere.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

extension Sandbox {
    /// Writes `lines` into files of `size` lines each (the last may be shorter) and returns their paths.
    func chunks(of lines: [String], size: Int) throws -> [String] {
        try stride(from: 0, to: lines.count, by: size).map { start in
            let chunk = lines[start..<min(start + size, lines.count)].joined(separator: "\n") + "\n"
            return try write(chunk, to: String(format: "chunk-%03d.jsonl", start / size))
        }
    }

    /// A process (not yet started) that imports `files` into `ledger` one after another, one
    /// transaction each, with the sandbox's environment; it exits 1 at the first failed import.
    func importer(_ files: some Sequence<String>, into ledger: String) throws -> Process {
        let tool = try #require(Tool.executable, "permission-ledger was not built")
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = [
            "-c", #"tool="$1"; ledger="$2"; shift 2; for f in "$@"; do "$tool" import --ledger "$ledger" "$f" || exit 1; done"#,
            "writer", tool.path, ledger,
        ] + Array(files)
        var environment = ProcessInfo.processInfo.environment
        environment["PERMISSION_LEDGER"] = nil
        environment["TMPDIR"] = temporaryDirectory.path
        environment[Sandbox.seedVariable] = Sandbox.seed
        writer.environment = environment
        writer.currentDirectoryURL = workingDirectory
        writer.standardInput = FileHandle.nullDevice
        // What the imports print is not looked at unless a test sets these again.
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        return writer
    }
}

/// Starts `process`, one start at a time in this test process, for the few tests that need Foundation's
/// `Process` (pipes, a shell loop): its `run()` can crash the test process (see ``ChildProcess``, which the
/// tool's own runs use).
func spawn(_ process: Process) throws {
    spawnLock.lock()
    defer { spawnLock.unlock() }
    try process.run()
}

private let spawnLock = NSLock()
