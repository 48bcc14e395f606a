import ArgumentParser
import ChildProcess
import Foundation
@_spi(StorageEngine) import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Synchronization

/// Writer tasks in this process and reader processes at once, for a while; the readers check every
/// snapshot they take against the log.
struct Stress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write from many tasks while other processes read; check that no reader sees a torn or out-of-order state.",
        discussion: """
        The writer tasks append single events (committed together by the writer thread), batches, and \
        events and batches the ledger must reject. Each reader process takes snapshot after snapshot and \
        checks, in each one: the head never goes back; the log runs on from the last snapshot with no gap, \
        each event's hash chaining from the one before and the last one equal to the head's; no rejected \
        event ever shows; every question touched since the last snapshot is in the state its events give \
        it, and every handle of an approved one is known; every permission changed since is in its last \
        state. At the end every reader must have reached the final head, and verify must pass.
        """)

    @Option(help: "How long the writers write, in seconds.") var seconds = 60.0
    @Option(help: "Writer tasks in this process.") var writers = 8
    @Option(help: "Reader processes.") var readers = 4
    @Option(help: "Seed of the writers' events.") var seed: UInt64 = 11
    @Option(help: "A scratch directory, emptied first (default: a new one under TMPDIR, removed afterwards).")
    var dir: String?

    func run() async throws {
        let scratch = dir ?? NSTemporaryDirectory() + "/ledger-stress-test-\(getpid())"
        try? FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { if dir == nil { try? FileManager.default.removeItem(atPath: scratch) } }
        let path = "\(scratch)/ledger"
        let stopFile = "\(scratch)/stop"
        let ledger = try Ledger(path: path)

        let readerPIDs = try (0..<readers).map { index in
            try spawnSelf(["stress-reader", "--ledger", path, "--stop-file", stopFile],
                          output: "\(scratch)/reader-\(index).out")
        }
        let started = now()
        let deadline = started + seconds
        let totals = try await withThrowingTaskGroup(of: WriterCounts.self) { group in
            for index in 0..<writers {
                group.addTask { try await Self.write(to: ledger, index: index, seed: seed, until: deadline) }
            }
            return try await group.reduce(into: WriterCounts()) { $0.add($1) }
        }
        let elapsed = now() - started
        let head = try ledger.head()
        // The final head tells the readers to take one last snapshot and to check they reached it.
        try "\(head.seq)\n".write(toFile: stopFile, atomically: true, encoding: .utf8)

        var readerTotals = ReaderCounts()
        var problems = totals.problems
        for (index, pid) in readerPIDs.enumerated() {
            let ending = Termination.wait(for: pid)
            let lines = wholeLines(of: "\(scratch)/reader-\(index).out")
            if let last = lines.last, let counts = ReaderCounts(line: last) {
                readerTotals.add(counts)
            }
            if ending != .exited(0) {
                problems.append("reader \(index) ended with \(ending): \(lines.suffix(20).joined(separator: "\n"))")
            }
        }
        let report = try await ledger.verify()
        if let problem = report.problem { problems.append("verify: seq \(report.damagedSeq ?? 0): \(problem)") }
        if head.seq != UInt64(totals.appended) {
            problems.append("the log holds \(head.seq) events, but the writers were told \(totals.appended) were appended")
        }

        print("""
            \(writers) writer tasks for \(String(format: "%.0f", elapsed)) s: \(grouped(totals.appended)) events appended \
            (\(grouped(totals.singles)) single appends, \(grouped(totals.batches)) batches), \
            \(grouped(totals.rejected)) appends rejected as intended, \(totals.problems.count) unexpected errors
            \(readers) reader processes: \(grouped(readerTotals.snapshots)) snapshots, \(grouped(readerTotals.events)) events \
            checked, \(grouped(readerTotals.questions)) question states, \(grouped(readerTotals.handles)) known handles, \
            \(grouped(readerTotals.permissions)) permissions; \(readerTotals.problems) torn or out of order
            verify: \(report.isIntact ? "ok" : "DAMAGED"), \(report.events) events, head \(report.head)
            """)
        for problem in problems { printError(problem) }
        if !problems.isEmpty || readerTotals.problems > 0 { throw ExitCode(1) }
    }

    /// One writer task: single events, batches, and appends the ledger must reject, until the deadline.
    static func write(to ledger: Ledger, index: Int, seed: UInt64, until deadline: Double) async throws -> WriterCounts {
        var random = SeededRandom(seed: seed &+ UInt64(index))
        var traffic = Traffic(seed: random.next(), prefix: "w\(index)")
        var counts = WriterCounts()
        while now() < deadline {
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                if roll < 60 {
                    guard case .appended = try await ledger.append(traffic.next()) else {
                        counts.problems.append("writer \(index): a new event was taken for a duplicate")
                        continue
                    }
                    counts.singles += 1
                    counts.appended += 1
                } else if roll < 85 {
                    let summary = try await ledger.append(traffic.next(Int.random(in: 2...100, using: &random)))
                    counts.batches += 1
                    counts.appended += summary.appended
                } else {
                    // Rejected: one bad event alone, or a batch of good ones with a bad one among them. The
                    // batch's events carry the `x-` prefix too, so that readers can tell none of them ever shows.
                    var scratch = traffic
                    scratch.prefix = "x-w\(index)"
                    var events = roll < 92 ? [] : scratch.next(Int.random(in: 1...20, using: &random))
                    events.insert(scratch.rejectable(), at: Int.random(in: 0...events.count, using: &random))
                    do {
                        _ = try await ledger.append(events)
                        counts.problems.append("writer \(index): a batch with an answer to no question was accepted")
                    } catch is AppendRejected {
                        counts.rejected += 1
                    }
                }
            } catch {
                counts.problems.append("writer \(index): \(error)")
            }
        }
        return counts
    }
}

struct WriterCounts: Sendable {
    var appended = 0
    var singles = 0
    var batches = 0
    var rejected = 0
    var problems: [String] = []

    mutating func add(_ other: WriterCounts) {
        appended += other.appended
        singles += other.singles
        batches += other.batches
        rejected += other.rejected
        problems += other.problems
    }
}

struct ReaderCounts {
    var snapshots = 0
    var events = 0
    var questions = 0
    var handles = 0
    var permissions = 0
    var problems = 0

    init() {}

    /// Parses the line `StressReader` ends with.
    init?(line: Substring) {
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        guard line.hasPrefix("counts "), numbers.count == 6 else { return nil }
        (snapshots, events, questions, handles, permissions, problems) =
            (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
    }

    var line: String { "counts \(snapshots) \(events) \(questions) \(handles) \(permissions) \(problems)" }

    mutating func add(_ other: ReaderCounts) {
        snapshots += other.snapshots
        events += other.events
        questions += other.questions
        handles += other.handles
        permissions += other.permissions
        problems += other.problems
    }
}

/// A reader process of `stress`: snapshot after snapshot until the stop file appears, each checked against
/// the log as the reader has seen it so far.
struct StressReader: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-reader",
        abstract: "A reader process of `stress` (not for direct use).",
        shouldDisplay: false)

    @Option var ledger: String
    @Option var stopFile: String

    func run() throws {
        var ledger: Ledger?
        // The writer may not have created the ledger yet.
        for _ in 0..<10_000 where ledger == nil {
            ledger = try? Ledger(path: self.ledger, options: Ledger.Options(readOnly: true))
            if ledger == nil { usleep(1000) }
        }
        guard let ledger else { throw Failure("\(self.ledger): could not be opened") }
        var checker = SnapshotChecker()
        var finalSeq: UInt64?
        while true {
            if finalSeq == nil, let text = try? String(contentsOfFile: stopFile, encoding: .utf8) {
                finalSeq = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            let before = checker.seen.seq
            try ledger.read { view in checker.check(view) }
            if let finalSeq {
                if checker.seen.seq != finalSeq {
                    checker.problem("the last snapshot ends at seq \(checker.seen.seq), not at the final seq \(finalSeq)")
                }
                break
            }
            if checker.seen.seq == before { usleep(200) }
        }
        print(checker.counts.line)
        if checker.counts.problems > 0 { throw ExitCode(1) }
    }
}

/// What a reader knows from the events it has seen, and the checks of each new snapshot against it.
struct SnapshotChecker {
    var seen = LogHead.empty
    var counts = ReaderCounts()
    /// Each question's subject, handles and the state its events so far give it.
    private var questions: [UUID: (subject: String, handles: [CommunicationHandle], state: QuestionState)] = [:]
    /// Each permission's last state, by subject.
    private var permissions: [String: [SystemPermission: SystemPermission.State]] = [:]

    mutating func problem(_ message: String) {
        counts.problems += 1
        if counts.problems <= 20 { printError(message) }
    }

    mutating func check(_ view: LedgerView) {
        counts.snapshots += 1
        let head = view.head
        guard head.seq >= seen.seq else {
            return problem("the head went back from seq \(seen.seq) to \(head.seq)")
        }
        var touchedQuestions: [UUID] = []
        var touchedSubjects = Set<String>()
        var previous = seen
        do {
            try view.forEachEvent(after: seen.seq, through: head.seq) { recorded in
                let (seq, hash, recordedAt, event) = (recorded.seq, recorded.hash, recorded.recordedAt, recorded.event)
                if seq != previous.seq + 1 { problem("the log jumps from seq \(previous.seq) to \(seq)") }
                if hash != chainHash(previous: previous.hash, record: try view.chainedRecord(seq: seq)) {
                    problem("seq \(seq): its hash does not chain from seq \(previous.seq)")
                }
                if event.id.hasPrefix("x-") { problem("seq \(seq): \(event.id) is an event the ledger rejected") }
                previous = LogHead(seq: seq, hash: hash, recordedAt: recordedAt)
                counts.events += 1
                learn(event, touched: &touchedQuestions, subjects: &touchedSubjects)
            }
        } catch {
            return problem("reading the log after seq \(seen.seq): \(error)")
        }
        if previous.seq != head.seq || previous.hash != head.hash {
            problem("the snapshot's head is seq \(head.seq), but its log ends at seq \(previous.seq)")
        }
        seen = head
        do {
            // A sample keeps each snapshot short when many events arrived at once.
            for id in touchedQuestions.suffix(200) {
                guard let known = questions[id] else { continue }
                counts.questions += 1
                let status = try view.question(id)
                if status?.state != known.state {
                    problem("seq \(head.seq): question \(id) is \(status.map { "\($0.state)" } ?? "missing"), its events say \(known.state)")
                }
                guard known.state == .approved else { continue }
                for handle in known.handles {
                    counts.handles += 1
                    if try !view.isKnownHandle(handle, subject: known.subject) {
                        problem("seq \(head.seq): \(handle.value) is not known to \(known.subject) after an approval")
                    }
                }
            }
            for subject in touchedSubjects {
                let stored = Dictionary(try view.permissions(subject: subject).map { ($0.permission, $0.state) }) { a, _ in a }
                for (permission, state) in permissions[subject] ?? [:] {
                    counts.permissions += 1
                    if stored[permission] != state {
                        problem("seq \(head.seq): \(subject)'s \(permission) is \(stored[permission].map { "\($0)" } ?? "missing"), its last event says \(state)")
                    }
                }
            }
        } catch {
            problem("seq \(head.seq): a query failed: \(error)")
        }
    }

    private mutating func learn(_ event: PermissionEvent, touched: inout [UUID], subjects: inout Set<String>) {
        switch event.payload {
        case .questionAsked(let question):
            let handles: [CommunicationHandle] = switch question.topic {
            case .communication(let topic): topic.personInformation.map(\.handle)
            default: []
            }
            questions[question.id] = (event.subject, handles, .pending)
            touched.append(question.id)
        case .questionSendCanceled(let id): end(id, .canceled, &touched)
        case .questionAskFailed(let id, _): end(id, .failed, &touched)
        case .questionExpired(let id): end(id, .expired, &touched)
        case .questionAnswered(let id, let choice, _): end(id, choice == "approve" ? .approved : .denied, &touched)
        case .handlesObserved, .subjectErased: break
        case .permissionChanged(let permission, let state, _):
            permissions[event.subject, default: [:]][permission] = state
            subjects.insert(event.subject)
        }
    }

    private mutating func end(_ id: UUID, _ state: QuestionState, _ touched: inout [UUID]) {
        questions[id]?.state = state
        touched.append(id)
    }
}
