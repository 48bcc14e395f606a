import ArgumentParser
import ChildProcess
import Foundation
@_spi(StorageEngine) import PermissionLedger
import PermissionLedgerTesting
import PermissionModel

/// Kills a process at random moments while it erases subjects and applies a retention limit, and checks after
/// each kill that every erasure is all or nothing (docs/spec/PRIVACY.md, `erase`).
struct CrashErase: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-erase",
        abstract: "Kill a process while it erases, and check that every erasure is whole or absent.",
        discussion: """
        Each round starts a writer (this tool's erase-writer: it appends traffic, then erases a subject or \
        applies a retention limit, over and over) and kills it with SIGKILL after a random delay. Then the \
        ledger is checked:

          - verify passes;
          - it opens for writing (which finishes destroying the keys of an erasure committed before the kill);
          - every event that an erasure in the log covers reads as erased, and every other event reads as \
            the writer appended it: an erasure is either absent, with everything readable, or recorded, with \
            its data unreadable;
          - every erasure the writer was told is recorded is in the log.

        Prints "N kills, 0 partial erasures, 0 damaged" and exits 0, or names every problem and exits 1.
        """)

    @Option(help: "How many times to kill the writer.") var kills = 100
    @Option(help: "Start a fresh ledger after this many kills.") var killsPerLedger = 20
    @Option(help: "The longest a writer runs before it is killed, in milliseconds.") var maxDelay = 300
    @Option(help: "Seed of the kill delays and of the writers' events.") var seed: UInt64 = 11
    @Option(help: "A scratch directory, emptied first (default: a new one under TMPDIR, removed afterwards).")
    var dir: String?

    func run() async throws {
        let scratch = dir ?? NSTemporaryDirectory() + "/ledger-crash-erase-\(getpid())"
        try? FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { if dir == nil { try? FileManager.default.removeItem(atPath: scratch) } }
        var random = SeededRandom(seed: seed)
        var partial = 0, damaged = 0, erasures = 0, erasedEvents = 0
        var ledgerNumber = 0
        var tried: [String: PermissionEvent] = [:]
        for round in 1...kills {
            if (round - 1) % killsPerLedger == 0 {
                ledgerNumber += 1
                tried = [:]
                // Made here, so that every kill lands in a writer of an existing ledger (the other crash test
                // kills writers that make theirs).
                _ = try Ledger(path: "\(scratch)/ledger-\(ledgerNumber)")
            }
            let path = "\(scratch)/ledger-\(ledgerNumber)"
            let out = "\(scratch)/writer.out"
            try? FileManager.default.removeItem(atPath: out)
            let pid = try spawnSelf(
                ["erase-writer", "--ledger", path, "--out", out, "--seed", "\(random.next())", "--prefix", "r\(round)"],
                output: "\(scratch)/writer.log")
            usleep(UInt32(Int.random(in: 0...maxDelay * 1000, using: &random)))
            kill(pid, SIGKILL)
            let ending = Termination.wait(for: pid)
            guard ending == .killed(signal: SIGKILL) else {
                let log = (try? String(contentsOfFile: "\(scratch)/writer.log", encoding: .utf8)) ?? ""
                throw Failure("round \(round): the writer ended by itself (\(ending)) before it was killed: \(log)")
            }
            var acknowledged: [String] = [], acknowledgedSeqs: [UInt64] = []
            for line in wholeLines(of: out) {
                if line.hasPrefix("try "), let event = try EventJSON.decode(line: String(line.dropFirst(4))) {
                    tried[event.id] = event
                } else if line.hasPrefix("erased ") {
                    acknowledged.append(String(line.dropFirst(7)))
                } else if line.hasPrefix("retained "), let seq = UInt64(line.dropFirst(9)) {
                    acknowledgedSeqs.append(seq)
                }
            }
            let check = try await Self.check(path: path, tried: tried, acknowledged: acknowledged, acknowledgedSeqs: acknowledgedSeqs)
            erasures += check.erasures
            erasedEvents += check.erasedEvents
            partial += check.partial.count
            if !check.damage.isEmpty { damaged += 1 }
            for problem in check.damage + check.partial { printError("round \(round): \(problem)") }
        }
        print("\(ledgerNumber) ledgers; after the kills, \(erasures) erasures and \(erasedEvents) erased events checked in all")
        print("\(kills) kills, \(partial) partial erasures, \(damaged) damaged")
        if partial > 0 || damaged > 0 { throw ExitCode(1) }
    }

    struct Check {
        var erasures = 0
        var erasedEvents = 0
        var partial: [String] = []
        var damage: [String] = []
    }

    /// The checks after one kill. `tried` holds every event the writers of this ledger appended or tried to;
    /// `acknowledged`, the ids of the erasures this round's writer was told are recorded, and `acknowledgedSeqs`
    /// the seqs of its retention erasures.
    static func check(
        path: String, tried: [String: PermissionEvent], acknowledged: [String], acknowledgedSeqs: [UInt64]
    ) async throws -> Check {
        var check = Check()
        let report = try await Ledger.verify(path: path)
        if let problem = report.problem { check.damage.append("verify: seq \(report.damagedSeq ?? 0): \(problem)") }
        // Opening for writing finishes what an erasure committed before the kill left to do.
        let ledger = try Ledger(path: path)
        var events: [PermissionEvent] = []
        try ledger.read { view in try view.forEachEvent(after: 0, through: view.head.seq) { events.append($0.event) } }
        // Which events the log's erasures cover, worked out from the log alone.
        var covered: Set<UInt64> = []
        for erasure in events {
            guard case .subjectErased(let what) = erasure.payload, let seq = erasure.seq, let at = erasure.recordedAt else { continue }
            check.erasures += 1
            let cut = what.before.flatMap { $0 > at ? nil : $0 }
            for event in events where event.subject == erasure.subject && event.seq! < seq && cut.map({ event.recordedAt! < $0 }) ?? true {
                covered.insert(event.seq!)
            }
        }
        let ids = Set(events.map(\.id))
        for id in acknowledged where !ids.contains(id) {
            check.partial.append("the erasure \(id), acknowledged, is not in the log")
        }
        for seq in acknowledgedSeqs where !events.contains(where: { $0.seq == seq && $0.type == .subjectErased }) {
            check.partial.append("the retention erasure acknowledged at seq \(seq) is not in the log")
        }
        for event in events where event.type != .subjectErased {
            guard let want = tried[event.id] else {
                check.damage.append("seq \(event.seq!) holds an event the writer never appended (\(event.id))")
                continue
            }
            let personal = !PersonalFields(of: want).isEmpty
            if covered.contains(event.seq!) && personal {
                if event.erased == nil {
                    check.partial.append("seq \(event.seq!) is covered by an erasure in the log and still reads")
                } else {
                    check.erasedEvents += 1
                }
            } else if event.erased != nil {
                check.partial.append("seq \(event.seq!) reads as erased, and no erasure in the log covers it")
            } else {
                var readable = event
                (readable.recordedAt, readable.seq, readable.hash, readable.salt) = (nil, nil, nil, nil)
                if readable != want { check.damage.append("seq \(event.seq!) differs from the event the writer appended") }
            }
        }
        // Physically complete: no key the erasures destroyed is left readable in the key store.
        let readableKeys = try ledger.destroyedKeysStillReadable()
        if readableKeys > 0 { check.partial.append("\(readableKeys) destroyed keys are still readable in the key store") }
        // Nor any key that a write killed before it committed made.
        if let problem = try keysNamedByNothingProblem(ledger) { check.damage.append(problem) }
        await ledger.close()
        return check
    }
}

/// The process `crash-erase` kills: appends traffic and erases, until it is killed.
struct EraseWriter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase-writer",
        abstract: "The writer that `crash-erase` kills (not for direct use).",
        shouldDisplay: false)

    @Option var ledger: String
    @Option var out: String
    @Option var seed: UInt64
    @Option var prefix: String

    func run() async throws {
        let output = try LineOutput(path: out)
        let ledger = try Ledger(path: ledger)
        var random = SeededRandom(seed: seed)
        var traffic = Traffic(seed: random.next(), prefix: prefix)
        for round in 1... {
            // Few events between erasures, so that most kills land in an erasure.
            let events = traffic.next(Int.random(in: 1...6, using: &random))
            output.write(events.map { "try " + EventJSON.encode($0) })
            _ = try await ledger.append(events)
            let subjects = try ledger.read { try $0.subjects() }
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                // A retention limit a little in the past: every subject's events before it.
                let before = Timestamp(Date().addingTimeInterval(-Double(Int.random(in: 0..<200, using: &random)) / 1000))
                let summary = try await ledger.retain(before: before)
                output.write(summary.erasures.map { "retained \($0.seq)" })
            case 1:
                let id = "\(prefix)-erase-\(round)"
                _ = try await ledger.erase(subject: subjects.randomElement(using: &random)!, Erasure(basis: .guardianRequest),
                                           occurredAt: Timestamp(Date()), id: id)
                output.write(["erased \(id)"])
            default:
                // The erasure event appended as any event is: the same step, without the counts `erase` reads.
                let id = "\(prefix)-erase-\(round)"
                let erasure = PermissionEvent(
                    id: id, subject: subjects.randomElement(using: &random)!, occurredAt: Timestamp(Date()),
                    payload: .subjectErased(Erasure(basis: .accountDeleted, reference: "case-\(round)")))
                _ = try await ledger.append(erasure)
                output.write(["erased \(id)"])
            }
        }
    }
}
