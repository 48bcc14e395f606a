import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Damage detection: bytes flipped in a copy of a ledger's data file. `verify` names the damaged
/// seq (exit 4) whenever what a reader sees changed, never says ok then, never dies of a signal, never hangs.
@Suite("damage detection", .timeLimit(.minutes(10)))
struct DamageDetectionTests {
    // MARK: Deterministic damage

    @Test("a changed byte in an event's record: exit 4 naming that event's seq")
    func damagedEvent() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 2)
            let file = try DataFile(ledger: ledger)
            let node = try #require(file.node(ofTable: "events", key: seqKey(250)), "seq 250 is in a leaf of the log")
            var damaged = file
            damaged.bytes[node.dataOffset + 32 + 7] ^= 0x01 // past the chain hash, inside the record
            let copy = try damaged.write(to: sandbox.path("damaged"))

            let result = try verify(sandbox, copy, format: "table")
            #expect(result.status == 4 && !result.crashed, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("seq 250:") == true, "\(result)")
        }
    }

    @Test("a changed byte in a projection row: exit 4 naming the row's seq and table")
    func damagedProjectionRow() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 2)
            let file = try DataFile(ledger: ledger)
            // A permissions row's key ends with the seq of the event that set it.
            let leaf = try #require(file.pages(ofTable: "permissions", leaves: true).first)
            let node = try #require(file.nodes(inPage: leaf).dropFirst(3).first)
            let seq = node.key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            var damaged = file
            damaged.bytes[node.dataOffset + node.dataSize - 1] ^= 0x04
            let copy = try damaged.write(to: sandbox.path("damaged"))

            let result = try verify(sandbox, copy, format: "json")
            #expect(result.status == 4 && !result.crashed, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("seq \(seq): the permissions projection") == true, "\(result)")
            let json = try result.json()
            #expect(json.bool("ok") == false)
            #expect(json.int("damagedSeq") == Int(seq))
            #expect(json.int("events") == 400)
        }
    }

    @Test("a branch key changed so that lookups miss a row a scan still returns: exit 4")
    func damagedBranchKey() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 2)
            let file = try DataFile(ledger: ledger)
            // eventIDs only grows, so a branch key is exactly the first key of the page to its right: raising
            // it sends a lookup of that first key to the page on the left, where it is not.
            let branch = try #require(file.pages(ofTable: "eventIDs", leaves: false).first, "eventIDs has a branch page")
            let node = try #require(file.nodes(inPage: branch).dropFirst().first)
            var damaged = file
            damaged.bytes[node.keyOffset + node.key.count - 1] &+= 1
            let copy = try damaged.write(to: sandbox.path("damaged"))
            #expect(try digests(sandbox, copy) == digests(sandbox, ledger), "a scan sees the same rows")

            let result = try verify(sandbox, copy, format: "table")
            #expect(result.status == 4 && !result.crashed, "\(result)")
            #expect(result.errorLines.first?.contains("lookup") == true, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("seq ") == true, "\(result)")
        }
    }

    @Test("a branch page whose header is damaged, which would send LMDB's lookups round in a loop: exit 4 at once, not a hang")
    func damagedBranchHeader() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 6)
            let file = try DataFile(ledger: ledger)
            let branch = try #require(file.pages(ofTable: "handles", leaves: false).first, "handles has a branch page")
            var damaged = file
            // Bytes 9 to 12 of the page: its flags (10 and 11) become 0x26ef, a page of no kind.
            damaged.bytes.replaceSubrange((branch * file.pageSize + 9)..<(branch * file.pageSize + 13), with: [0x70, 0xEF, 0x26, 0x05])
            let copy = try damaged.write(to: sandbox.path("damaged"))

            let result = try verify(sandbox, copy, format: "table")
            #expect(!result.timedOut && result.status == 4 && !result.crashed, "\(result)")
            #expect(result.errorLines.count == 1 && result.err.contains("page \(branch) of the handles table"), "\(result)")
        }
    }

    @Test("a meta page's transaction ID changed so that LMDB would show the previous commit: exit 4")
    func rolledBackMetaPage() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 2)
            let file = try DataFile(ledger: ledger)
            let (newer, older) = file.meta(0).transactionID > file.meta(1).transactionID ? (0, 1) : (1, 0)
            let n = file.meta(newer).transactionID
            // Both variants keep the IDs consecutive, with page i holding IDs of parity i: the newer page
            // going back to N - 2, or the older one jumping to N + 1. Either way LMDB opens commit N - 1.
            for (page, id) in [(newer, n - 2), (older, n + 1)] {
                var damaged = file
                damaged.setTransactionID(id, ofMeta: page)
                let copy = try damaged.write(to: sandbox.path("rolled-back-\(page)"))
                let seen = try digests(sandbox, copy)
                let intact = try digests(sandbox, ledger)
                #expect(seen != nil && seen != intact, "LMDB shows another commit")

                let result = try verify(sandbox, copy, format: "table")
                #expect(result.status == 4 && !result.crashed, "\(result)")
                #expect(result.errorLines.first?.hasPrefix("seq 1: the data file's meta pages are damaged") == true, "\(result)")
            }
        }
    }

    @Test("a meta page LMDB refuses is damage (exit 4); a file with no LMDB meta page is not a ledger (exit 3)")
    func unreadableMetaPages() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 1)
            let file = try DataFile(ledger: ledger)
            var oneMagic = file
            oneMagic.bytes[file.pageSize + 16] ^= 0xFF // the magic number of meta page 1
            let damaged = try oneMagic.write(to: sandbox.path("one-magic"))
            let result = try verify(sandbox, damaged, format: "table")
            #expect(result.status == 4 && !result.crashed, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("seq 1: the data file's meta pages are damaged: meta page 1 lacks LMDB's magic") == true, "\(result)")

            var noMagic = oneMagic
            noMagic.bytes[16] ^= 0xFF
            let foreign = try noMagic.write(to: sandbox.path("no-magic"))
            let notLedger = try verify(sandbox, foreign, format: "table")
            #expect(notLedger.status == 3 && !notLedger.crashed, "\(notLedger)")
            #expect(notLedger.err.contains("not a ledger"), "\(notLedger)")
        }
    }

    @Test("another command that meets damage could not read the ledger: exit 3, naming the seq and pointing to verify (exit 4)")
    func damageMetByAnotherCommand() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 1)
            let file = try DataFile(ledger: ledger)
            // The version byte of the third event's record, after its 32-byte chain hash.
            let event = try #require(file.node(ofTable: "events", key: [0, 0, 0, 0, 0, 0, 0, 3]))
            var damaged = file
            damaged.bytes[event.dataOffset + 32] = 0xEE
            let copy = try damaged.write(to: sandbox.path("damaged"))
            #expect(try verify(sandbox, copy, format: "table").status == 4)
            for command in [["export"], ["history"]] {
                let result = try sandbox.run(command + ["--ledger", copy])
                #expect(result.status == 3 && !result.crashed, "\(result)")
                #expect(result.errorLines.count == 1, "\(result)")
                #expect(result.errorLines.first?.hasPrefix("seq 3: ") == true, "\(result)")
                #expect(result.err.contains("permission-ledger verify"), "\(result)")
            }
        }
    }

    @Test("a changed version in the meta table is damage when the tables bear this build out; an older one asks for a rebuild")
    func damagedMetaTable() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 1)
            let file = try DataFile(ledger: ledger)
            let format = try #require(file.node(ofTable: "meta", key: Array("format".utf8)))
            let projections = try #require(file.node(ofTable: "meta", key: Array("projections".utf8)))
            for (node, value, status, start) in [
                (format, 4, 4, "seq 1: the meta table holds format=4 projections=9"),
                // Format 1 is an older ledger's, which has no keys table: this one has.
                (format, 1, 4, "seq 1: the meta table holds format=1 projections=9"),
                (projections, 0, 4, "seq 1: the meta table holds format=3 projections=0"),
                (projections, 12, 4, "seq 1: the meta table holds format=3 projections=12"),
                // A version this build knows as older: an older ledger whose rows happen to be this build's.
                // The engine's remedy, worded as the tool's command.
                (projections, 4, 3, """
                    \(sandbox.path("meta-4")): the ledger's indexes were made by an older PermissionLedger; rebuild them \
                    once with 'permission-ledger rebuild --ledger \(sandbox.path("meta-4"))' (the log itself is unchanged)
                    """),
            ] {
                var damaged = file
                damaged.bytes[node.dataOffset] = UInt8(value)
                let copy = try damaged.write(to: sandbox.path("meta-\(value)"))
                let result = try verify(sandbox, copy, format: "table")
                #expect(result.status == Int32(status) && !result.crashed, "\(result)")
                #expect(result.errorLines.first?.hasPrefix(start) == true, "\(result)")
            }
        }
    }

    @Test("the check's process dying of a signal: exit 4, one line naming the signal and the seq it was checking")
    func checkingProcessDiesOfSignal() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 6)
            let tool = try #require(Tool.executable).path
            // The walk of the pages finds what would make LMDB fault before any read, so the signal is sent from
            // here, to the check's process found while it runs; a run that ends before it is found is run again.
            for attempt in 0..<20 {
                let out = open(sandbox.path("verify-\(attempt).out"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                let err = open(sandbox.path("verify-\(attempt).err"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                let verify = try ChildProcess.start(
                    tool, ["verify", "--ledger", ledger, "--format", "json"], environment: ProcessInfo.processInfo.environment,
                    directory: sandbox.root.path, stdin: FileHandle.nullDevice.fileDescriptor, stdout: out, stderr: err)
                close(out)
                close(err)
                var signalled = false
                let deadline = Date().addingTimeInterval(30)
                while !signalled, Date() < deadline, !hasEnded(verify.pid) {
                    if let check = childProcess(of: verify.pid, named: "checking-process") {
                        // Stopped first, so that the signal reaches a check under way: one that finished between
                        // the look and the signal has exited (its parent reports what it found), and a signal to it
                        // does nothing, yet succeeds.
                        signalled = stopWhileRunning(check) && kill(check, SIGSEGV) == 0
                        kill(check, SIGCONT)
                    } else {
                        usleep(1_000)
                    }
                }
                let ended = verify.wait()
                guard signalled else { continue }
                let result = try String(contentsOfFile: sandbox.path("verify-\(attempt).err"), encoding: .utf8)
                let lines = result.split(separator: "\n")
                #expect(ended.status == 4 && ended.signal == nil, "\(ended) \(result)")
                #expect(lines.count == 1 && lines[0].hasPrefix("seq ") && lines[0].contains(": the check's process died of SIGSEGV"), "\(result)")
                let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sandbox.path("verify-\(attempt).out")))) as? [String: Any]
                #expect(json?["ok"] as? Bool == false && (json?["damagedSeq"] as? Int ?? 0) >= 1, "\(String(describing: json))")
                return
            }
            Issue.record("the check's process was never found running in 20 runs of verify")
        }
    }

    @Test("SIGSEGV sent by another process kills the tool, as it would without the handler for faults in the data file")
    func aSegmentationSignalSentKillsTheTool() throws {
        try withFixtureLedger("family-day.jsonl") { _, ledger in
            // An export into a pipe nobody drains: it blocks in its write, its handlers installed.
            let process = Process()
            process.executableURL = Tool.executable
            process.arguments = ["export", "--ledger", ledger]
            var environment = ProcessInfo.processInfo.environment
            environment["SWIFT_BACKTRACE"] = "enable=no"
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try spawn(process)
            #expect(try pipe.fileHandleForReading.read(upToCount: 1) == Data("{".utf8))
            kill(process.processIdentifier, SIGSEGV)
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning {
                Issue.record("the tool lived on after SIGSEGV")
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGSEGV,
                    "\(process.terminationReason) \(process.terminationStatus)")
        }
    }

    @Test("a record that claims to run past the end of the file: exit 4 naming its seq, found before a read of it could raise SIGBUS")
    func recordPastTheEndOfTheFile() throws {
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 1)
            let file = try DataFile(ledger: ledger)
            // Seq 57's record made to claim one byte less than the whole file: a size LMDB hands on as is, and
            // which runs past the end of the file. Reading it where the map has no file under it raises SIGBUS in
            // whatever process reads it; verify walks the pages first, and finds it there.
            let node = try #require(file.node(ofTable: "events", key: seqKey(57)))
            var damaged = file
            damaged.setDataSize(file.bytes.count - 1, of: node)
            let copy = try damaged.write(to: sandbox.path("damaged"))
            #expect(try digests(sandbox, copy) == nil, "a plain reader of the damaged file dies or fails")

            let result = try verify(sandbox, copy, format: "json")
            #expect(result.status == 4 && !result.crashed && !result.timedOut, "\(result)")
            #expect(result.errorLines.count == 1, "one line, nothing of the child's: \(result)")
            #expect(result.errorLines.first?.hasPrefix("seq 57: the data file's pages are damaged: page ") == true, "\(result)")
            let json = try result.json()
            #expect(json.bool("ok") == false)
            #expect(json.int("damagedSeq") == 57)

            let intact = try verify(sandbox, ledger, format: "table")
            #expect(intact.status == 0 && intact.out.hasPrefix("ok: 200 events, head "), "\(intact)")
        }
    }

    // MARK: Random damage

    /// Trials of one to six flipped bytes or a run of random bytes, in every kind of page. Set
    /// `PERMISSION_LEDGER_DAMAGE_SEED` (and `PERMISSION_LEDGER_DAMAGE_TRIALS`) to run other trials, or a
    /// failing trial again: its message names the seed, the trial and the bytes.
    @Test("random flips: exit 4 naming a seq whenever what a reader sees changed, exit 0 only when it did not, never a signal")
    func randomFlips() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["PERMISSION_LEDGER_DAMAGE_SEED"].flatMap { UInt64($0) } ?? 20_261_120
        let trialCount = environment["PERMISSION_LEDGER_DAMAGE_TRIALS"].flatMap { Int($0) } ?? 160
        try withSandbox { sandbox in
            let ledger = try makeLedger(sandbox, chunks: 6, thenImporting: "significant-update.jsonl")
            let original = try DataFile(ledger: ledger)
            let originalDigests = try #require(try digests(sandbox, ledger), "the intact ledger dumps")
            let kinds = original.classify()
            let categories = Dictionary(grouping: kinds.keys, by: { kinds[$0]!.category })
                .mapValues { $0.sorted() }
                .sorted { $0.key < $1.key }
            try #require(categories.count >= 8, "every kind of page is present: \(categories.map(\.key))")

            var random = TrialRandom(seed: seed)
            let trials = (0..<trialCount).map { index in
                let (category, pages) = categories[index % categories.count]
                return Trial(index: index, category: category, page: pages.randomElement(using: &random)!, file: original, random: &random)
            }
            let outcomes = Outcomes()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                for trial in trials where trial.index % 2 == worker {
                    do {
                        outcomes.add(try run(trial, original, originalDigests, sandbox))
                    } catch {
                        outcomes.add(.init(trial: trial, changed: true, verify: nil, error: "\(error)"))
                    }
                }
            }

            let all = outcomes.all.sorted { $0.trial.index < $1.trial.index }
            for outcome in all {
                let where_ = "seed \(seed), \(outcome.trial)"
                guard let run = outcome.verify else {
                    Issue.record("\(where_): \(outcome.error ?? "no run")")
                    continue
                }
                #expect(!run.crashed, "verify died of a signal: \(where_)\n\(run)")
                #expect(!run.timedOut, "verify hung (killed after 120 s): \(where_)\n\(run)")
                #expect(run.status == 0 || run.status == 4, "\(where_)\n\(run)")
                if outcome.changed {
                    #expect(run.status == 4, "what a reader sees changed, yet verify did not report damage: \(where_)\n\(run)")
                }
                if run.status == 4 {
                    let named = run.errorLines.first.map { (try? #/^seq \d+: /#.prefixMatch(in: $0)) != nil } ?? false
                    #expect(named, "exit 4 names no seq: \(where_)\n\(run)")
                }
            }
            let changed = all.filter(\.changed)
            let flips = all.map(\.trial.flips.count).reduce(0, +)
            let bytes = all.map { $0.trial.flips.map(\.bytes.count).reduce(0, +) }.reduce(0, +)
            func count(_ outcomes: [Outcome], _ status: Int32) -> Int { outcomes.count { $0.verify?.status == status && $0.verify?.crashed == false } }
            print("""
                damage detection, seed \(seed): \(all.count) trials, \(flips) flips (\(bytes) bytes) over \
                \(categories.map { "\($0.key) (\($0.value.count) pages)" }.joined(separator: ", ")); \
                what a reader sees changed in \(changed.count): verify exit 4 in \(count(changed, 4)), exit 0 in \(count(changed, 0)); \
                unchanged in \(all.count - changed.count): exit 4 in \(count(all, 4) - count(changed, 4)), exit 0 in \(count(all, 0) - count(changed, 0)); \
                the check's process died of a signal in \(all.count { $0.verify?.err.contains("the check's process died of") == true }) \
                (reported as damage); verify died of a signal in \(all.count { $0.verify?.crashed == true }), \
                hung in \(all.count { $0.verify?.timedOut == true })
                """)
        }
    }

    /// Damages a copy, then asks a separate process what a reader sees and verify what it finds.
    private func run(_ trial: Trial, _ original: DataFile, _ originalDigests: String, _ sandbox: Sandbox) throws -> Outcome {
        var file = original
        for flip in trial.flips {
            file.bytes.replaceSubrange(flip.offset..<(flip.offset + flip.bytes.count), with: flip.bytes)
        }
        let copy = try file.write(to: sandbox.path("trial-\(trial.index)"))
        defer { try? FileManager.default.removeItem(atPath: copy) }
        // A dump that fails, crashes or hangs counts as changed; so do meta pages that break LMDB's rules.
        let seen = try digests(sandbox, copy)
        let changed = seen != originalDigests || file.metaPagesBreakLMDBRules
        let result = try verify(sandbox, copy, format: "table")
        return Outcome(trial: trial, changed: changed, verify: result, error: nil)
    }

    // MARK: Helpers

    /// A ledger of the family day's first `chunks` × 200 events, imported 200 at a time (one commit each, so
    /// that the file has free pages and older pages), then of `extra`'s events.
    private func makeLedger(_ sandbox: Sandbox, chunks: Int, thenImporting extra: String? = nil) throws -> String {
        let lines = try Fixture.text("family-day.jsonl").split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.isEmpty }.map(String.init)
        let files = try sandbox.chunks(of: Array(lines.prefix(chunks * 200)), size: 200) + (extra.map { [Fixture.path($0)] } ?? [])
        let ledger = sandbox.ledger
        for file in files {
            let result = try sandbox.run(["import", "--ledger", ledger, file])
            try #require(result.status == 0, "\(result)")
        }
        return ledger
    }

    private func verify(_ sandbox: Sandbox, _ ledger: String, format: String) throws -> ToolRun {
        try sandbox.run(["verify", "--ledger", ledger, "--format", format], killAfter: 120)
    }

    /// What a reader sees: every LMDB database's row count and digest, from a process of its own
    /// (`ledger-reliability table-digests`); `nil` when that process fails, dies or hangs.
    private func digests(_ sandbox: Sandbox, _ ledger: String) throws -> String? {
        let reader: URL = try #require(ReliabilityTests.executable, "ledger-reliability was not built")
        let result = try sandbox.run(["table-digests", "--ledger", ledger], killAfter: 120, program: reader)
        return result.status == 0 && !result.crashed && !result.timedOut ? result.out : nil
    }

    private func seqKey(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian, Array.init) }
}

// MARK: - Trials

/// A seeded xorshift64* generator, so that every trial can be run again.
private struct TrialRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// Bytes to write over a copy of the data file.
private struct Flip: CustomStringConvertible {
    var offset: Int
    var bytes: [UInt8]

    var description: String { "\(offset)=\(bytes.map { String(format: "%02x", $0) }.joined())" }
}

private struct Trial: CustomStringConvertible, Sendable {
    var index: Int
    var category: String
    var page: Int
    var flips: [Flip]

    /// One byte changed, two to six bytes changed, or a run of 4 to 64 random bytes, in `page` (within the
    /// meta data of a meta page, the rest of which LMDB never reads).
    init(index: Int, category: String, page: Int, file: DataFile, random: inout TrialRandom) {
        self.index = index
        self.category = category
        self.page = page
        let span = category == "meta page" ? 160 : file.pageSize
        let start = page * file.pageSize
        func changed(_ offset: Int) -> Flip {
            Flip(offset: offset, bytes: [file.bytes[offset] ^ UInt8.random(in: 1...255, using: &random)])
        }
        switch index % 3 {
        case 0:
            flips = [changed(start + Int.random(in: 0..<span, using: &random))]
        case 1:
            flips = (0..<Int.random(in: 2...6, using: &random)).map { _ in changed(start + Int.random(in: 0..<span, using: &random)) }
        default:
            let length = Int.random(in: 4...64, using: &random)
            let offset = start + Int.random(in: 0...(span - length), using: &random)
            flips = [Flip(offset: offset, bytes: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })]
        }
    }

    var description: String { "trial \(index): \(category), page \(page), flips \(flips)" }
}

extension Flip: Sendable {}

private struct Outcome: Sendable {
    var trial: Trial
    var changed: Bool
    var verify: ToolRun?
    var error: String?
}

private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [Outcome] = []

    func add(_ outcome: Outcome) { lock.withLock { outcomes.append(outcome) } }
    var all: [Outcome] { lock.withLock { outcomes } }
}

// MARK: - The data file's pages

/// An LMDB data file (LMDB 0.9, 64-bit layout) read from its bytes, to choose where to damage it: which
/// pages are meta pages, which belong to which table's tree (branch or leaf), to LMDB's main database or
/// free list, and which are free (not in the newest commit's trees).
private struct DataFile {
    var bytes: [UInt8]
    let pageSize: Int
    /// The ledger the data file was read from, whose key files a copy takes along.
    let ledger: String

    init(ledger: String) throws {
        self.ledger = ledger
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ledger).appendingPathComponent("data.mdb")))
        pageSize = 4096
        try #require(u32(16 + 24) == UInt32(pageSize), "meta page 0 gives the page size")
    }

    func write(to directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent("data.mdb"))
        // The ledger's keys, unchanged: the damage is the data file's alone.
        for name in ["data-keys", "ledger.key"] {
            let contents = try Data(contentsOf: URL(fileURLWithPath: ledger).appendingPathComponent(name))
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            try #require(FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600]))
        }
        return directory
    }

    func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
    func u32(_ offset: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) } }
    func u64(_ offset: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) } }

    struct Meta {
        var flags: Int, magic: UInt32, version: UInt32, pageNumber: UInt64
        var freeRoot: UInt64, mainRoot: UInt64, lastPage: UInt64, transactionID: UInt64
    }

    func meta(_ index: Int) -> Meta {
        let page = index * pageSize
        let meta = page + 16
        return Meta(
            flags: u16(page + 10), magic: u32(meta), version: u32(meta + 4), pageNumber: u64(page),
            freeRoot: u64(meta + 24 + 40), mainRoot: u64(meta + 72 + 40), lastPage: u64(meta + 120), transactionID: u64(meta + 128))
    }

    /// Makes a leaf node's value claim `size` bytes (the node header's low and high 16 bits).
    mutating func setDataSize(_ size: Int, of node: Node) {
        let header = node.keyOffset - 8
        for byte in 0..<4 { bytes[header + byte] = UInt8(truncatingIfNeeded: size >> (8 * byte)) }
    }

    mutating func setTransactionID(_ id: UInt64, ofMeta index: Int) {
        let offset = index * pageSize + 16 + 128
        for byte in 0..<8 { bytes[offset + byte] = UInt8(truncatingIfNeeded: id >> (8 * UInt64(byte))) }
    }

    /// LMDB's rules for its meta pages, checked here apart from `verify`: each is a meta page numbered 0 or 1
    /// with LMDB's magic and version 1; page i holds IDs of parity i, and they are consecutive.
    var metaPagesBreakLMDBRules: Bool {
        let metas = [meta(0), meta(1)]
        for (index, meta) in metas.enumerated()
        where meta.flags & 0x08 == 0 || meta.magic != 0xBEEF_C0DE || meta.version != 1 || meta.pageNumber != UInt64(index) {
            return true
        }
        let (even, odd) = (metas[0].transactionID, metas[1].transactionID)
        return even % 2 != 0 || odd % 2 != 1 || (even &+ 1 != odd && odd &+ 1 != even)
    }

    struct Node {
        var keyOffset: Int
        var key: [UInt8]
        var flags: Int
        var dataOffset: Int
        var dataSize: Int
        /// A branch node's child page.
        var child: Int
    }

    func nodes(inPage page: Int) -> [Node] {
        let start = page * pageSize
        let lower = u16(start + 12)
        guard lower >= 16, lower <= pageSize else { return [] }
        return (0..<(lower - 16) / 2).compactMap { index in
            let node = start + u16(start + 16 + 2 * index)
            guard node + 8 <= start + pageSize else { return nil }
            let (lo, hi, flags, keySize) = (u16(node), u16(node + 2), u16(node + 4), u16(node + 6))
            guard node + 8 + keySize <= start + pageSize else { return nil }
            return Node(
                keyOffset: node + 8, key: Array(bytes[(node + 8)..<(node + 8 + keySize)]), flags: flags,
                dataOffset: node + 8 + keySize, dataSize: lo | hi << 16, child: lo | hi << 16 | flags << 32)
        }
    }

    enum Kind: Hashable {
        case meta, main, freeList, free
        case branch(String), leaf(String), overflow(String)

        var category: String {
            switch self {
            case .meta: "meta page"
            case .main: "main database"
            case .freeList: "free-list tree"
            case .free: "free page"
            case .branch("events"): "log branch"
            case .leaf("events"): "log leaf"
            case .leaf("meta"): "meta table"
            case .branch: "projection branch"
            case .leaf: "projection leaf"
            case .overflow: "overflow"
            }
        }
    }

    /// Every page's kind, from the newest commit's trees.
    func classify() -> [Int: Kind] {
        let pageCount = bytes.count / pageSize
        var kinds: [Int: Kind] = [0: .meta, 1: .meta]
        let newest = meta(0).transactionID > meta(1).transactionID ? meta(0) : meta(1)
        func walk(_ root: UInt64, _ table: String?) {
            var stack = [root]
            while let page = stack.popLast() {
                guard page != .max, page < pageCount, kinds[Int(page)] == nil else { continue }
                let flags = u16(Int(page) * pageSize + 10)
                if flags & 0x01 != 0 {
                    kinds[Int(page)] = table.map(Kind.branch) ?? .main
                    stack += nodes(inPage: Int(page)).map { UInt64($0.child) }
                } else if flags & 0x02 != 0 {
                    kinds[Int(page)] = table.map(Kind.leaf) ?? .main
                    for node in nodes(inPage: Int(page)) {
                        if table == nil, node.flags & 0x02 != 0 {
                            walk(u64(node.dataOffset + 40), String(decoding: node.key, as: UTF8.self))
                        } else if node.flags & 0x01 != 0, let table {
                            let first = Int(u64(node.dataOffset))
                            for overflow in first..<(first + Int(u32(first * pageSize + 12))) { kinds[overflow] = .overflow(table) }
                        }
                    }
                }
            }
        }
        walk(newest.mainRoot, nil)
        // No table is named with a NUL: the free list's own pages, relabelled below.
        let freeListTree = "\u{0}free list"
        walk(newest.freeRoot, freeListTree)
        for page in 0..<pageCount {
            switch kinds[page] {
            case nil: kinds[page] = .free
            case .branch(freeListTree), .leaf(freeListTree): kinds[page] = .freeList
            default: break
            }
        }
        return kinds
    }

    /// The pages of a table's tree: its leaves, or its branch pages.
    func pages(ofTable table: String, leaves: Bool) -> [Int] {
        classify().filter { $0.value == (leaves ? .leaf(table) : .branch(table)) }.map(\.key).sorted()
    }

    /// The leaf node of `table` whose key is `key`.
    func node(ofTable table: String, key: [UInt8]) -> Node? {
        for page in pages(ofTable: table, leaves: true) {
            if let node = nodes(inPage: page).first(where: { $0.key == key }) { return node }
        }
        return nil
    }
}

/// Whether the process `pid`, a child of this one, has ended (a zombie not yet waited for) or is gone.
private func hasEnded(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return true }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
}

/// Stops `pid` (`SIGSTOP`) and waits until it is stopped: `false` when it exits first.
private func stopWhileRunning(_ pid: pid_t) -> Bool {
    guard kill(pid, SIGSTOP) == 0 else { return false }
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        switch stat[stat.index(close, offsetBy: 2)] {
        case "T", "t": return true
        case "Z", "X": return false
        default: usleep(1_000)
        }
    }
    return false
}

/// A running child of `parent` whose command line holds `argument`.
private func childProcess(of parent: pid_t, named argument: String) -> pid_t? {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
    for entry in entries {
        guard let pid = pid_t(entry),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 1, fields[0] != "Z", pid_t(fields[1]) == parent,
              let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
              String(decoding: command, as: UTF8.self).contains(argument) else { continue }
        return pid
    }
    return nil
}
