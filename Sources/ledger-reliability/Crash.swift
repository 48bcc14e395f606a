import ArgumentParser
import ChildProcess
import Foundation
@_spi(StorageEngine) import PermissionLedger
import PermissionLedgerTesting
import PermissionModel

/// Kills a writer with SIGKILL at random moments, over and over, and after each kill checks that nothing it
/// was told is durable was lost and that nothing is damaged or half-written.
struct Crash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Kill a writing process at random moments and check that nothing acknowledged is lost.",
        discussion: """
        Each round starts a writer (this tool's crash-writer: six tasks appending single events and \
        batches of up to 2,000, on a map that starts at 1 MiB so that it grows often). The writer logs each \
        event before it appends it and each seq once its append has returned (is durable). After a random \
        delay the writer is killed with SIGKILL; then the ledger is opened and checked:

          - verify passes (the chain, every stored event, every projection against a rebuild);
          - every acknowledged event is present at its seq and equal to what was appended;
          - every event after the last check is one the writer tried, whole and unchanged;
          - the events checked before are still there (the hash at the last checked seq is unchanged);
          - the next append continues the chain (seq head+1, hash chained from the head).

        Prints "N kills, 0 lost, 0 damaged" and exits 0, or names every problem and exits 1.
        """)

    @Option(help: "How many times to kill the writer.") var kills = 200
    @Option(help: "Start a fresh ledger after this many kills (verify reads the whole ledger each time).")
    var killsPerLedger = 25
    @Option(help: "The longest a writer runs before it is killed, in milliseconds (each delay is random below it).")
    var maxDelay = 400
    @Option(help: "Seed of the kill delays and of the writers' events.") var seed: UInt64 = 7
    @Option(help: "A scratch directory, emptied first (default: a new one under TMPDIR, removed afterwards).")
    var dir: String?

    func run() async throws {
        let scratch = dir ?? NSTemporaryDirectory() + "/ledger-crash-test-\(getpid())"
        try? FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { if dir == nil { try? FileManager.default.removeItem(atPath: scratch) } }
        var random = SeededRandom(seed: seed)
        var totals = Totals()
        var checked = LogHead.empty
        var ledgerNumber = 0
        let started = now()
        for round in 1...kills {
            if (round - 1) % killsPerLedger == 0 {
                ledgerNumber += 1
                checked = .empty
            }
            let path = "\(scratch)/ledger-\(ledgerNumber)"
            let out = "\(scratch)/writer.out"
            // A writer killed before it opens its output must not leave the previous round's behind.
            try? FileManager.default.removeItem(atPath: out)
            let pid = try spawnSelf(
                ["crash-writer", "--ledger", path, "--out", out, "--seed", "\(random.next())", "--prefix", "r\(round)"],
                output: "\(scratch)/writer.log")
            let delay = Int.random(in: 0...maxDelay * 1000, using: &random)
            usleep(UInt32(delay))
            kill(pid, SIGKILL)
            let ending = Termination.wait(for: pid)
            guard ending == .killed(signal: SIGKILL) else {
                let log = (try? String(contentsOfFile: "\(scratch)/writer.log", encoding: .utf8)) ?? ""
                throw Failure("round \(round): the writer ended by itself (\(ending)) before it was killed: \(log)")
            }
            let round = RoundCheck(round: round, path: path, writerOutput: out, checked: checked)
            let result = try await round.run()
            totals.add(result)
            checked = result.head
            for problem in result.problems { printError("round \(round.round): \(problem)") }
        }
        let seconds = now() - started
        print("""
            \(totals.lost == 0 && totals.damaged == 0 ? "ok" : "FAILED"): \(grouped(totals.acknowledged)) events acknowledged \
            in \(kills) rounds over \(ledgerNumber) ledgers (\(grouped(totals.unacknowledged)) more were durable when \
            killed, \(totals.killedBeforeFirstAck) kills came before the first acknowledgement), \
            \(String(format: "%.0f", seconds)) s
            """)
        print("\(kills) kills, \(totals.lost) lost, \(totals.damaged) damaged")
        if totals.lost > 0 || totals.damaged > 0 { throw ExitCode(1) }
    }
}

/// What every round adds up to.
struct Totals {
    var acknowledged = 0
    var unacknowledged = 0
    var killedBeforeFirstAck = 0
    /// Acknowledged events missing or changed.
    var lost = 0
    /// Rounds after which the ledger was damaged or held something half-written or never appended.
    var damaged = 0

    mutating func add(_ result: RoundCheck.Result) {
        acknowledged += result.acknowledged
        unacknowledged += result.unacknowledged
        if result.acknowledged == 0 { killedBeforeFirstAck += 1 }
        lost += result.lost
        if !result.damage.isEmpty { damaged += 1 }
    }
}

/// The checks after one kill.
struct RoundCheck {
    let round: Int
    let path: String
    let writerOutput: String
    /// The head the previous check ended with, and checked up to.
    let checked: LogHead

    struct Result {
        var head: LogHead
        var acknowledged = 0
        var unacknowledged = 0
        var lost = 0
        var damage: [String] = []
        var lostEvents: [String] = []
        var problems: [String] { damage + lostEvents }
    }

    func run() async throws -> Result {
        // What the writer tried (logged before each append) and what it was told is durable.
        var tried: [String: PermissionEvent] = [:]
        var acknowledged: [(seq: UInt64, id: String)] = []
        for line in wholeLines(of: writerOutput) {
            if line.hasPrefix("try ") {
                guard let event = try EventJSON.decode(line: String(line.dropFirst(4))) else { continue }
                tried[event.id] = event
            } else if line.hasPrefix("ack ") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, let seq = UInt64(fields[1]) else { throw Failure("a bad writer line: \(line)") }
                acknowledged.append((seq, String(fields[2])))
            }
        }
        var result = Result(head: checked, acknowledged: acknowledged.count)

        let ledger = try Ledger(path: path)
        let report = try await ledger.verify()
        if let problem = report.problem {
            result.damage.append("verify: seq \(report.damagedSeq ?? 0): \(problem)")
        }
        // Opening for writing destroyed the keys of a write that the kill kept from committing.
        if let problem = try keysNamedByNothingProblem(ledger) { result.damage.append(problem) }
        let head = try ledger.head()
        // The events checked before are still there, unchanged (the chain covers everything before).
        if head.seq < checked.seq {
            result.damage.append("the log went back from seq \(checked.seq) to \(head.seq)")
        } else if checked.seq > 0, try hash(at: checked.seq, in: ledger) != checked.hash {
            result.damage.append("the event at seq \(checked.seq), checked before this round, changed")
        }
        // Every new event is one the writer tried, whole.
        var stored: [String: UInt64] = [:]
        try ledger.read { view in try view.forEachEvent(after: checked.seq, through: view.head.seq) { event in
            let seq = event.seq
            guard let want = tried[event.id] else {
                result.damage.append("seq \(seq) holds an event the writer never appended (\(event.id))")
                return
            }
            if content(of: event.event) != want {
                result.damage.append("seq \(seq) differs from the event the writer appended: \(EventJSON.encode(event))")
            }
            stored[event.id] = seq
        } }
        // Every acknowledged event is there, at the seq it was acknowledged with.
        for (seq, id) in acknowledged where stored[id] != seq {
            result.lost += 1
            result.lostEvents.append("event \(id), acknowledged at seq \(seq), is \(stored[id].map { "at seq \($0)" } ?? "missing")")
        }
        result.unacknowledged = max(0, stored.count - acknowledged.count)
        // The next append continues the chain.
        let probe = PermissionEvent(
            id: "check-\(round)", subject: "kid-0", occurredAt: Timestamp(Date()),
            payload: .permissionChanged(.camera, state: .authorized, cause: .settings))
        let outcome = try await ledger.append(probe)
        guard outcome == .appended(seq: head.seq + 1) else {
            result.damage.append("the next append got \(outcome), not seq \(head.seq + 1)")
            return result
        }
        var appended: RecordedEvent?
        try ledger.read { view in try view.forEachEvent(after: head.seq, through: head.seq + 1) { appended = $0 } }
        guard let appended else {
            result.damage.append("the event appended at seq \(head.seq + 1) cannot be read back")
            return result
        }
        let chained = try ledger.read { view in try view.chainedRecord(seq: head.seq + 1) }
        if appended.hash != chainHash(previous: head.hash, record: chained) {
            result.damage.append("the event appended at seq \(head.seq + 1) does not chain from the head's hash")
        }
        result.head = try ledger.head()
        return result
    }

    private func hash(at seq: UInt64, in ledger: Ledger) throws -> ChainHash? {
        var hash: ChainHash?
        try ledger.read { view in try view.forEachEvent(after: seq - 1, through: seq) { hash = $0.hash } }
        return hash
    }

    private func content(of event: PermissionEvent) -> PermissionEvent {
        var copy = event
        copy.recordedAt = nil
        copy.seq = nil
        copy.hash = nil
        return copy
    }
}

/// The process `crash` kills: appends until it is killed, logging each event before its append and each
/// `seq` once its append has returned.
struct CrashWriter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer",
        abstract: "The writer that `crash` kills (not for direct use).",
        shouldDisplay: false)

    @Option var ledger: String
    @Option var out: String
    @Option var seed: UInt64
    @Option var prefix: String
    @Option(help: "Stop after this many appends per task (default: never; the writer is killed).")
    var appends: Int?

    func run() async throws {
        let output = try LineOutput(path: out)
        // A small map that grows often, so that some kills land while it grows.
        let ledger = try Ledger(path: ledger, options: Ledger.Options(mapSize: 1 << 20))
        let limit = appends ?? .max
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<6 {
                group.addTask {
                    var random = SeededRandom(seed: seed &+ UInt64(task))
                    var traffic = Traffic(seed: random.next(), prefix: "\(prefix)t\(task)")
                    for _ in 0..<limit {
                        // Tasks 0 and 1 append batches (task 0 large ones: long transactions); the others
                        // single events, which the writer thread commits together.
                        let size = switch task {
                        case 0: Int.random(in: 1...2000, using: &random)
                        case 1: Int.random(in: 1...50, using: &random)
                        default: 1
                        }
                        let events = traffic.next(size)
                        output.write(events.map { "try " + EventJSON.encode($0) })
                        let summary = try await ledger.append(events)
                        output.write(zip(events, summary.outcomes).map { event, outcome in
                            switch outcome {
                            case .appended(let seq): "ack \(seq) \(event.id)"
                            case .duplicate(let seq): "duplicate \(seq) \(event.id)"
                            }
                        })
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
