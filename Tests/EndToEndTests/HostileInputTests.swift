import Foundation
import Testing

/// Hostile input: every bad line of the corpus in `Fixtures/hostile/` (see its README section) is
/// rejected by the real `permission-ledger import` with exit 1 and one readable `FILE:LINE:` line, and the
/// ledger's export is byte-identical afterwards.
///
/// Every case is imported into a copy of one ledger that holds `Fixtures/hostile/base.jsonl`: its file is
/// the case's context lines and bad line, after a comment and a blank line.
@Suite("hostile input", .timeLimit(.minutes(10)))
struct HostileInputTests {
    // MARK: The checks

    /// Checks what `import` of a file whose only bad line is `line` reported: exit 1, `NAME:LINE: reason` as
    /// one line of plain text containing every `expects`, then `rejected: nothing was written`, nothing else.
    static func expectRejected(_ result: ToolRun, name: String, line: Int, expects: [String]) {
        #expect(!result.crashed, "crashed: \(result)")
        #expect(result.status == 1, "\(result)")
        #expect(String(validating: result.stderr, as: UTF8.self) != nil, "standard error is not UTF-8: \(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        // One problem, one line: a reason holding a raw newline would make three.
        #expect(result.errorLines.count == 2, "\(result)")
        #expect(result.errorLines.last == "rejected: nothing was written", "\(result)")
        guard let first = result.errorLines.first else { return }
        let place = "\(name):\(line): "
        #expect(first.hasPrefix(place), "\(result)")
        let reason = first.hasPrefix(place) ? String(first.dropFirst(place.count)) : first
        expectReadable(reason, in: result)
        for text in expects {
            #expect(reason.contains(text), "the reason does not say \(text.debugDescription): \(result)")
        }
    }

    /// A reason a person can read: not empty, at most 1000 characters, no control characters, no Swift dumps.
    static func expectReadable(_ reason: String, in result: ToolRun) {
        #expect(!reason.trimmingCharacters(in: .whitespaces).isEmpty, "no reason: \(result)")
        #expect(reason.count <= 1000, "a reason of \(reason.count) characters: \(result)")
        let control = reason.unicodeScalars.first { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        #expect(control == nil, "a control character (\(control.map { String($0.value, radix: 16) } ?? "")) in \(result)")
        for dump in ["Swift.", "DecodingError", "Fatal error", "Optional(", "Error(", "PermissionLedger.", "PermissionModel."] {
            #expect(!reason.contains(dump), "a Swift value in the message: \(result)")
        }
    }

    // MARK: The tests

    @Test("the corpus has at least 200 cases of distinct kinds, every group in use, every case says what it expects")
    func corpus() throws {
        let cases = HostileCase.all
        #expect(cases.count >= 200, "\(cases.count) cases")
        let kinds = cases.map(\.kind)
        #expect(Set(kinds).count == kinds.count, "kinds repeat: \(Dictionary(grouping: kinds) { $0 }.filter { $1.count > 1 }.keys.sorted())")
        #expect(Set(HostileCase.fromFiles.map(\.group)).count >= 12)
        for hostile in cases {
            #expect(!hostile.expects.isEmpty, "\(hostile.kind) has no # expect: line")
        }
        // The base ledger imports as it is.
        let base = try BaseLedger.shared.get()
        #expect(base.export.split(separator: UInt8(ascii: "\n")).count == 15)
    }

    @Test("each bad line alone is rejected: exit 1, FILE:LINE: and a readable reason; the export is unchanged",
          arguments: HostileCase.all)
    func rejected(_ hostile: HostileCase) throws {
        let base = try BaseLedger.shared.get()
        try withSandbox { sandbox in
            let ledger = try base.copy(in: sandbox)
            let (file, line) = try hostile.write(in: sandbox)
            let result = try sandbox.run(["import", "--ledger", ledger, file])
            Self.expectRejected(result, name: file, line: line, expects: hostile.expects)
            #expect(try sandbox.export(ledger) == base.export, "the rejected import changed the ledger")
        }
    }

    /// Cases read from standard input: an encoding problem, a NUL byte, deep nesting, a 2 MiB line (also as
    /// the last line, with no newline after it), a wide object and rule rejections.
    static let throughStandardInput = [
        "bytes/utf8-overlong-slash-2", "bytes/nul-between-fields", "huge/nesting-100000-arrays", "huge/line-2mib-padded",
        "huge/line-2mib-last-without-newline", "huge/object-90000-unknown-fields", "chain/seq-skips", "chain/id-reused-in-file",
        "followups/answer-at-expiry",
    ]

    @Test("the same through standard input (-): <stdin>:LINE:", arguments: throughStandardInput)
    func rejectedFromStandardInput(_ kind: String) throws {
        let hostile = try #require(HostileCase.all.first { $0.kind == kind }, "no case \(kind)")
        let base = try BaseLedger.shared.get()
        try withSandbox { sandbox in
            let ledger = try base.copy(in: sandbox)
            let (file, line) = try hostile.write(in: sandbox)
            let result = try sandbox.run(["import", "--ledger", ledger, "-"], stdin: file)
            Self.expectRejected(result, name: "<stdin>", line: line, expects: hostile.expects)
            #expect(try sandbox.export(ledger) == base.export, "the rejected import changed the ledger")
        }
    }

    /// The cases that need no context line, in corpus order: each is bad on its own against the base ledger.
    /// A line too long is left out: it is the last line read of its file (the `rejected` tests take it alone).
    static let standalone = HostileCase.all.filter { $0.context.isEmpty && !$0.expects.contains { $0.contains("the rest of this input was not read") } }

    @Test("a file of every standalone bad line: exit 1, the first 100 reported in order, then that there are more; nothing written")
    func manyBadLines() throws {
        let base = try BaseLedger.shared.get()
        let cases = Self.standalone
        try #require(cases.count > 100)
        try withSandbox { sandbox in
            let ledger = try base.copy(in: sandbox)
            var bytes = Array("# every standalone hostile line, one a line from line 2\n".utf8)
            for hostile in cases { bytes += hostile.line() + [0x0A] }
            let file = sandbox.path("all.jsonl")
            try Data(bytes).write(to: URL(fileURLWithPath: file))

            let result = try sandbox.run(["import", "--ledger", ledger, file])
            #expect(!result.crashed && result.status == 1, "\(result)")
            let reported = result.errorLines.filter { $0.hasPrefix("\(file):") }
            #expect(reported.count == 100, "\(reported.count) reported")
            for (offset, (line, hostile)) in zip(reported, cases).enumerated() {
                #expect(line.hasPrefix("\(file):\(offset + 2): "), "\(hostile.kind): \(line)")
            }
            #expect(result.errorLines.count == 102, "one line a problem")
            #expect(result.errorLines.suffix(2) == ["… and more problems; the first 100 are shown", "rejected: nothing was written"])
            #expect(try sandbox.export(ledger) == base.export, "the rejected import changed the ledger")
        }
    }

    @Test("standalone bad lines 100 to a file: every one reported, in order, for its own reason; nothing written",
          arguments: Array(stride(from: 0, to: standalone.count, by: 100)))
    func everyBadLineOfAFile(_ start: Int) throws {
        let base = try BaseLedger.shared.get()
        let cases = Array(Self.standalone[start..<min(start + 100, Self.standalone.count)])
        try withSandbox { sandbox in
            let ledger = try base.copy(in: sandbox)
            var bytes: [UInt8] = []
            for hostile in cases { bytes += hostile.line() + [0x0A] }
            let file = sandbox.path("hundred.jsonl")
            try Data(bytes).write(to: URL(fileURLWithPath: file))

            let result = try sandbox.run(["import", "--ledger", ledger, file])
            #expect(!result.crashed && result.status == 1, "\(result)")
            #expect(result.errorLines.count == cases.count + 1, "one line a problem: \(result.errorLines.count) lines for \(cases.count) cases")
            #expect(result.errorLines.last == "rejected: nothing was written")
            for (offset, (line, hostile)) in zip(result.errorLines, cases).enumerated() {
                let place = "\(file):\(offset + 1): "
                #expect(line.hasPrefix(place), "\(hostile.kind): \(line)")
                for text in hostile.expects {
                    #expect(line.contains(text), "\(hostile.kind): the reason does not say \(text.debugDescription): \(line)")
                }
            }
            #expect(try sandbox.export(ledger) == base.export, "the rejected import changed the ledger")
        }
    }

    @Test("the committed corpus is what generate_hostile.py writes", .enabled(if: Python.available))
    func corpusIsFresh() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", packageRoot.appendingPathComponent("Tools/Fixtures/generate_hostile.py").path, "--check"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try spawn(process)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
    }
}

/// Whether `python3` can be run, for the test that regenerates the corpus.
enum Python {
    static let available: Bool = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/python3") }
    }()
}

/// The ledger every case is imported into: `Fixtures/hostile/base.jsonl` imported once, kept as its files (the
/// LMDB data file, the key store and the ledger's key) and its export.
struct BaseLedger: Sendable {
    static let fileNames = ["data.mdb", "data-keys", "ledger.key"]
    var files: [Data]
    var export: Data

    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }

    static let shared: Result<BaseLedger, SetupFailure> = {
        do {
            return .success(try withSandbox { sandbox in
                let ledger = try sandbox.ledger(importing: HostileCase.directory.appendingPathComponent("base.jsonl").path)
                return BaseLedger(
                    files: try fileNames.map { try Data(contentsOf: URL(fileURLWithPath: ledger).appendingPathComponent($0)) },
                    export: try sandbox.export(ledger))
            })
        } catch {
            return .failure(SetupFailure(description: "the base ledger could not be made: \(error)"))
        }
    }()

    /// A ledger in the sandbox holding the base's events, and its path.
    func copy(in sandbox: Sandbox) throws -> String {
        let ledger = sandbox.ledger
        try FileManager.default.createDirectory(atPath: ledger, withIntermediateDirectories: true)
        for (name, contents) in zip(Self.fileNames, files) {
            let path = URL(fileURLWithPath: ledger).appendingPathComponent(name).path
            guard FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600]) else {
                throw SetupFailure(description: "\(path) could not be written")
            }
        }
        return ledger
    }
}

/// One hostile case: a bad line of a named kind, the valid lines it needs before it, and text its error
/// line must contain.
struct HostileCase: Sendable, CustomTestStringConvertible {
    static let directory = Fixture.directory.appendingPathComponent("hostile")

    var kind: String
    var expects: [String]
    var context: [[UInt8]]
    /// Makes the bad line (without its newline): huge ones are made when a test needs them.
    var line: @Sendable () -> [UInt8]
    /// Whether the file ends with a newline after the bad line.
    var terminated = true

    var group: Substring { kind.prefix { $0 != "/" } }
    var testDescription: String { kind }

    /// Writes the case's file into the sandbox: a comment, a blank line, the context, the bad line. Returns the
    /// file's path and the bad line's number.
    func write(in sandbox: Sandbox) throws -> (path: String, line: Int) {
        var bytes = Array("# hostile case \(kind)\n\n".utf8)
        for line in context { bytes += line + [0x0A] }
        bytes += line()
        if terminated { bytes.append(0x0A) }
        let path = sandbox.path("case.jsonl")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, 2 + context.count + 1)
    }

    static let all = fromFiles + generated

    /// The cases of `Fixtures/hostile/*.cases`, by file name, then in file order.
    static let fromFiles: [HostileCase] = {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".cases") }.sorted()
        return names.flatMap { name in
            (try? Data(contentsOf: directory.appendingPathComponent(name))).map { parse(Array($0)) } ?? []
        }
    }()

    /// Reads a `.cases` file: `# case: KIND` starts a case, `# expect: TEXT` adds to it, other comment and
    /// blank lines are skipped, and of a case's other lines the last is the bad line, the rest its context.
    static func parse(_ bytes: [UInt8]) -> [HostileCase] {
        var cases: [(kind: String, expects: [String], lines: [[UInt8]])] = []
        for slice in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            let line = Array(slice)
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("# case: ") {
                cases.append((String(text.dropFirst(8)), [], []))
            } else if text.hasPrefix("# expect: "), !cases.isEmpty {
                cases[cases.count - 1].expects.append(String(text.dropFirst(10)))
            } else if let first = line.first(where: { $0 != 0x20 && $0 != 0x09 }), first != UInt8(ascii: "#"), !cases.isEmpty {
                cases[cases.count - 1].lines.append(line)
            }
        }
        return cases.compactMap { found in
            guard let bad = found.lines.last else { return nil }
            return HostileCase(kind: found.kind, expects: found.expects, context: Array(found.lines.dropLast()), line: { bad })
        }
    }

    /// Cases too large to commit, made at test time: lines of 2 MiB, nesting 100,000 deep, objects and arrays
    /// of 90,000 to 400,000 members.
    static let generated: [HostileCase] = {
        let event = #"{"type":"permission.changed","id":"hx-huge","subject":"kid-ava","occurredAt":"2026-11-20T11:00:00Z","recordedAt":"2026-11-20T11:00:01Z","permission":"microphone","state":"denied","cause":"settings"}"#
        let bytes = Array(event.utf8)
        let mebibyte = 1 << 20
        let tooLong = "the line is longer than 1048576 bytes: at most 1048576 (1 MiB) are allowed; the rest of this input was not read"
        let tooDeep = "nested deeper than 32 levels"
        /// The event with `text` put before its closing brace.
        @Sendable func adding(_ text: [UInt8]) -> [UInt8] { bytes.dropLast() + text + [UInt8(ascii: "}")] }
        /// The event padded with spaces to `length` bytes.
        @Sendable func padded(to length: Int) -> [UInt8] { adding([UInt8](repeating: 0x20, count: length - bytes.count)) }
        @Sendable func fields(_ count: Int, last: String? = nil) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(count * 11)
            for n in 0..<count { out += Array(",\"x\(n)\":0".utf8) }
            if let last { out += Array(",\"\(last)\":0".utf8) }
            return out
        }
        func make(_ kind: String, _ expects: [String], terminated: Bool = true, _ line: @escaping @Sendable () -> [UInt8]) -> HostileCase {
            HostileCase(kind: "huge/" + kind, expects: expects, context: [], line: line, terminated: terminated)
        }
        return [
            make("line-2mib-padded", [tooLong]) { padded(to: 2 * mebibyte) },
            make("line-2mib-subject", [tooLong]) {
                Array(event.replacingOccurrences(of: "\"kid-ava\"", with: "\"" + String(repeating: "k", count: 2 * mebibyte) + "\"").utf8)
            },
            make("line-2mib-garbage", [tooLong]) { [UInt8](repeating: UInt8(ascii: "x"), count: 2 * mebibyte) },
            make("line-2mib-nul-bytes", [tooLong]) { [UInt8](repeating: 0, count: 2 * mebibyte) },
            make("line-2mib-ff-bytes", [tooLong]) { [UInt8](repeating: 0xFF, count: 2 * mebibyte) },
            make("line-2mib-last-without-newline", [tooLong], terminated: false) { padded(to: 2 * mebibyte) },
            make("line-1mib-plus-one-byte", [tooLong]) { padded(to: mebibyte + 1) },
            make("line-1mib-plus-one-byte-with-cr", [tooLong]) { padded(to: mebibyte + 1) + [0x0D] },
            make("subject-1mib-in-a-line-of-1mib", ["subject: is", "at most 256 are allowed"]) {
                let subject = String(repeating: "k", count: mebibyte - bytes.count)
                return Array(event.replacingOccurrences(of: "\"kid-ava\"", with: "\"" + subject + "\"").utf8)
            },
            make("nesting-100000-arrays", [tooDeep]) { [UInt8](repeating: UInt8(ascii: "["), count: 100_000) },
            make("nesting-100000-arrays-closed", [tooDeep]) {
                [UInt8](repeating: UInt8(ascii: "["), count: 100_000) + [UInt8](repeating: UInt8(ascii: "]"), count: 100_000)
            },
            make("nesting-100000-objects", [tooDeep]) { Array(String(repeating: #"{"a":"#, count: 100_000).utf8) },
            make("nesting-50000-in-a-field", [tooDeep]) {
                adding(Array(",\"question\":".utf8) + [UInt8](repeating: UInt8(ascii: "["), count: 50_000)
                    + [UInt8](repeating: UInt8(ascii: "]"), count: 50_000))
            },
            make("object-90000-unknown-fields", ["x0: unknown field"]) { adding(fields(90_000)) },
            make("object-90000-fields-last-repeated", ["invalid JSON", "\"x0\" appears twice"]) { adding(fields(90_000, last: "x0")) },
            make("array-400000-numbers", ["cause: expected a string, got an array"]) {
                Array(event.replacingOccurrences(
                    of: #""cause":"settings""#,
                    with: #""cause":["# + Array(repeating: "1", count: 400_000).joined(separator: ",") + "]").utf8)
            },
            make("actions-100000-then-unknown", ["actions[100000]", "is not one of"]) {
                let actions = Array(repeating: #""message""#, count: 100_000).joined(separator: ",") + #","teleport""#
                return Array((#"{"type":"question.asked","id":"hx-huge-actions","subject":"kid-ava","occurredAt":"2026-11-20T11:00:00Z","recordedAt":"2026-11-20T11:00:01Z","question":{"id":"6A3F1C2E-DEAD-4000-8000-0000000FFFFF","topic":{"communication":{"people":[{"handle":{"value":"orbit","kind":"custom"}}],"actions":["#
                    + actions + "]}}}}").utf8)
            },
            make("choices-15000-none-a-denial", ["question.choices: must offer at least one denial"]) {
                let choices = (0..<15_000).map { #"{"id":"a\#($0)","title":"Approve","answer":"approval"}"# }.joined(separator: ",")
                return Array((#"{"type":"question.asked","id":"hx-huge-choices","subject":"kid-ava","occurredAt":"2026-11-20T11:00:00Z","recordedAt":"2026-11-20T11:00:01Z","question":{"id":"6A3F1C2E-DEAD-4000-8000-0000000FFFFE","topic":{"significantAppUpdate":{"description":"v3"}},"choices":["#
                    + choices + "]}}").utf8)
            },
        ]
    }()
}
