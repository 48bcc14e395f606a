import Foundation
import Testing

/// Every command of the tool against a damaged copy of a small ledger: the data file cut short at every page
/// boundary, emptied, or with whole pages overwritten by random bytes (docs/spec/CLI.md: a command never dies
/// of a signal or an assertion on a damaged file; damage is exit 3 with one line, or 4 from `verify`).
///
/// A writer (`import`, `rebuild`) refuses a damaged ledger and leaves its data file as it was; it writes only
/// when `verify` finds the copy intact (the pages hit were free). A reader either refuses with one line or,
/// when the pages it reads were not hit, answers exactly as it does on the intact ledger.
@Suite("damaged ledgers: every command refuses or answers right, none crashes", .serialized, .timeLimit(.minutes(10)))
struct DamagedLedgerTests {
    /// LMDB's page size in the tests' ledgers.
    static let pageSize = 4096

    @Test("the data file cut short at every page boundary: every command exits 3 (verify 3 or 4) with one line")
    func truncated() async throws {
        try await withDamageFixture { fixture in
            let cuts = Array(0..<fixture.pages)
            return try fixture.check(cuts.map { pages in
                Damage(name: "cut to \(pages) pages") { bytes in Array(bytes.prefix(pages * Self.pageSize)) }
            }, mayBeIntact: false)
        }
    }

    @Test("the data file emptied: every command exits 3 with one line")
    func emptied() async throws {
        try await withDamageFixture { fixture in
            return try fixture.check([Damage(name: "emptied") { _ in [] }], mayBeIntact: false)
        }
    }

    @Test("pages of the used range overwritten with random bytes, fixed seeds", arguments: [
        (1, 1), (2, 1), (3, 2), (4, 3), (5, 5), (6, 10),
    ])
    func overwritten(seed: UInt64, pageCount: Int) async throws {
        try await withDamageFixture { fixture in
            var random = SeededGenerator(seed: seed)
            let damage = (0..<3).map { trial in
                let pages = Array((2..<fixture.pages).shuffled(using: &random).prefix(pageCount)).sorted()
                let noise = (0..<(pages.count * Self.pageSize)).map { _ in UInt8.random(in: 0...255, using: &random) }
                return Damage(name: "seed \(seed), trial \(trial): pages \(pages) overwritten") { bytes in
                    var bytes = bytes
                    for (index, page) in pages.enumerated() {
                        let start = page * Self.pageSize
                        bytes.replaceSubrange(start..<(start + Self.pageSize), with: noise[(index * Self.pageSize)..<((index + 1) * Self.pageSize)])
                    }
                    return bytes
                }
            }
            return try fixture.check(damage, mayBeIntact: true)
        }
    }

    @Test("each page of the used range overwritten alone: the writers refuse unless verify finds the copy intact")
    func eachPageOverwritten() async throws {
        try await withDamageFixture { fixture in
            var random = SeededGenerator(seed: 7)
            let damage = (2..<fixture.pages).map { page in
                let noise = (0..<Self.pageSize).map { _ in UInt8.random(in: 0...255, using: &random) }
                return Damage(name: "page \(page) overwritten") { bytes in
                    var bytes = bytes
                    bytes.replaceSubrange((page * Self.pageSize)..<((page + 1) * Self.pageSize), with: noise)
                    return bytes
                }
            }
            return try fixture.check(damage, mayBeIntact: true, readers: false)
        }
    }
}

/// One way to damage the data file.
private struct Damage: Sendable {
    var name: String
    var apply: @Sendable ([UInt8]) -> [UInt8]
}

/// A small ledger, what every command says about it intact, and the checks of a damaged copy.
private struct DamageFixture {
    let sandbox: Sandbox
    let pristine: String
    let bytes: [UInt8]
    let importFile: String
    /// Standard output of every reading command on the intact ledger.
    let answers: [String: Data]

    var pages: Int { bytes.count / DamagedLedgerTests.pageSize }

    /// Every command that reads the ledger but verify; those that can are asked as of the head, so that their
    /// answers do not depend on the clock.
    static let readers: [[String]] = queryCommands.filter { $0 != ["verify"] }.map { command in
        ["history", "diff"].contains(command[0]) ? command : command + ["--as-of", "seq:4"]
    } + [["export"], ["backup", "--format", "json"]]
    static let writers: [[String]] = [["import"], ["rebuild"]]

    init(_ sandbox: Sandbox) throws {
        self.sandbox = sandbox
        pristine = try sandbox.ledger(importing: Fixture.path("handles-observed.jsonl"))
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb")))
        importFile = try sandbox.write("""
            {"type":"handles.observed","id":"observed-05","subject":"kid-ben","occurredAt":"2026-11-20T12:00:00Z",\
            "recordedAt":"2026-11-20T12:00:01Z","checked":[{"value":"robo_rex","kind":"custom"}],"known":[]}

            """, to: "observed-05.jsonl")
        var answers: [String: Data] = [:]
        for command in Self.readers {
            let run = try Self.run(command, on: pristine, sandbox: sandbox, importFile: importFile)
            try #require(run.status == 0, "\(run)")
            answers[command.joined(separator: " ")] = run.stdout
        }
        self.answers = answers
        // The file imported by the writers appends to the intact ledger.
        let copy = sandbox.path("import-check")
        try FileManager.default.copyItem(atPath: pristine, toPath: copy)
        let imported = try Self.run(["import"], on: copy, sandbox: sandbox, importFile: importFile)
        try #require(imported.status == 0, "\(imported)")
    }

    /// Runs a command of ``readers`` or ``writers`` on `ledger`; a backup's directory is replaced by `OUT` in
    /// its output, so that outputs compare.
    static func run(_ command: [String], on ledger: String, sandbox: Sandbox, importFile: String) throws -> ToolRun {
        var arguments = command + ["--ledger", ledger]
        if command == ["import"] { arguments.append(importFile) }
        let out = sandbox.path("backup-\(UUID().uuidString)")
        if command.first == "backup" { arguments += ["--out", out] }
        var run = try sandbox.run(arguments, killAfter: 120)
        if command.first == "backup" {
            run.stdout = Data(run.out.replacingOccurrences(of: out, with: "OUT").utf8)
            try? FileManager.default.removeItem(atPath: out)
        }
        return run
    }

    /// Runs verify and every command (or the writers alone) against a copy damaged each way, two damages at a
    /// time; returns what went wrong, which the test records (it runs off the pool, where no test is current).
    func check(_ damages: [Damage], mayBeIntact: Bool, readers: Bool = true) throws -> [String] {
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: damages.count) { index in
            do {
                try check(damages[index], mayBeIntact: mayBeIntact, readers: readers, failures: failures)
            } catch {
                failures.add("\(damages[index].name): \(error)")
            }
        }
        return failures.all
    }

    private func check(_ damage: Damage, mayBeIntact: Bool, readers checksReaders: Bool, failures: Failures) throws {
        let damaged = damage.apply(bytes)
        let name = "damaged-\(UUID().uuidString)"
        func copy(_ suffix: String) throws -> String {
            let directory = sandbox.path("\(name)-\(suffix)")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(damaged).write(to: URL(fileURLWithPath: directory + "/data.mdb"))
            // The ledger's keys go along, undamaged: what is damaged is the data file.
            for keys in ["data-keys", "ledger.key"] {
                try FileManager.default.copyItem(atPath: pristine + "/" + keys, toPath: directory + "/" + keys)
            }
            return directory
        }
        func expect(_ condition: Bool, _ what: String, _ run: ToolRun) {
            if !condition { failures.add("\(damage.name): \(what)\n\(run)") }
        }
        func expectNoCrash(_ run: ToolRun) {
            expect(!run.crashed && !run.timedOut && run.status < 128, "died of a signal or hung", run)
            expect(!run.err.contains("Fatal error") && !run.err.contains("Crash") && !run.err.contains("Backtrace"),
                   "a crash report on standard error", run)
        }
        func expectRefusal(_ run: ToolRun, status: Set<Int32>) {
            expect(status.contains(run.status), "exit \(run.status), not \(status.sorted())", run)
            expect(run.errorLines.count == 1, "not one line on standard error", run)
        }

        let readers = try copy("readers")
        let verify = try sandbox.run(["verify", "--ledger", readers], killAfter: 120)
        expectNoCrash(verify)
        let intact = verify.status == 0
        if intact {
            expect(mayBeIntact, "verify says intact", verify)
        } else {
            expectRefusal(verify, status: [3, 4])
        }
        for command in Self.readers where checksReaders {
            let run = try Self.run(command, on: readers, sandbox: sandbox, importFile: importFile)
            expectNoCrash(run)
            if run.status == 0 {
                expect(run.stdout == answers[command.joined(separator: " ")], "answered otherwise than on the intact ledger", run)
            } else {
                expectRefusal(run, status: [3])
            }
        }
        for command in Self.writers {
            let ledger = try copy(command[0])
            let run = try Self.run(command, on: ledger, sandbox: sandbox, importFile: importFile)
            expectNoCrash(run)
            if intact && run.status == 0 { continue }
            expectRefusal(run, status: [3])
            let after = try Data(contentsOf: URL(fileURLWithPath: ledger + "/data.mdb"))
            expect(after == Data(damaged), "the data file changed", run)
        }
    }
}

/// Runs `body` with a fresh damage fixture, off the cooperative pool (each check runs dozens of commands), and
/// records the failures it returns.
private func withDamageFixture(_ body: @escaping @Sendable (DamageFixture) throws -> [String]) async throws {
    let failures = try await offThePool { try withSandbox { sandbox in try body(try DamageFixture(sandbox)) } }
    for failure in failures { Issue.record(Comment(rawValue: failure)) }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []

    func add(_ failure: String) { lock.withLock { failures.append(failure) } }
    var all: [String] { lock.withLock { failures } }
}

/// xorshift64*, so that each seed damages the same pages the same way on every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
