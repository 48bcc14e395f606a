import Foundation
import PermissionLedger
import PermissionModel

// `ledger-benchmark group-commit`: many tasks each appending single events with `Ledger.append`, which
// returns only once its event is durable. Measured twice on fresh ledgers, with the same workload:
// with group commit (the default), and with `maxEventsPerCommit: 1`, one durable transaction per append.
//
// Target on the 2-core reference machine: with 64 tasks, group commit reaches at least 20 times the
// throughput of one transaction per append, with a p99 append latency of at most 10 ms.

/// What one configuration measured.
struct GroupCommitRun {
    var label: String
    var tasks: Int
    var appends: Int
    var seconds: Double
    var latencies: [Double]
    var statistics: Ledger.WriterStatistics
    /// What the process passed to `write`-like calls during the run (`wchar`): every page the commits wrote.
    var bytesWritten: Int?

    var rate: Double { Double(appends) / seconds }
    var appendsPerTransaction: Double { Double(statistics.requests) / Double(max(1, statistics.transactions)) }
    var kibPerTransaction: Double? { bytesWritten.map { Double($0) / 1024 / Double(max(1, statistics.transactions)) } }
    func percentile(_ q: Double) -> Double {
        let sorted = latencies.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1e3
    }
}

/// An event that is valid in any order: a new question, an observation or a permission change.
func independentEvent(task: Int, index: Int) -> PermissionEvent {
    let subject = "kid-\(task)"
    let at = Timestamp(microseconds: 1_795_000_000_000_000 + Int64(index) * 1_000_000)
    let handle = try! CommunicationHandle(value: "friend-\(task)-\(index % 40)", kind: .custom)
    let payload: PermissionEvent.Payload
    switch index % 4 {
    case 0, 1:
        let question = try! PermissionQuestion(handle: handle, expiresAt: at.adding(seconds: 86_400))
        payload = .questionAsked(question)
    case 2:
        payload = .handlesObserved(checked: [handle], known: [handle])
    default:
        payload = .permissionChanged(.camera, state: index % 8 == 3 ? .authorized : .denied, cause: .settings)
    }
    return PermissionEvent(id: "t\(task)-\(index)", subject: subject, occurredAt: at, payload: payload)
}

/// Runs `tasks` tasks appending `perTask` single events each against a fresh durable ledger.
func measureConcurrentAppends(
    label: String, directory: String, tasks: Int, perTask: Int, maxEventsPerCommit: Int, durable: Bool = true
) async throws -> GroupCommitRun {
    try? FileManager.default.removeItem(atPath: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let ledger = try Ledger(path: directory, options: .init(mapSize: 64 << 20, durable: durable, maxEventsPerCommit: maxEventsPerCommit))
    let writtenBefore = bytesWrittenByProcess()
    let start = now()
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for task in 0..<tasks {
            group.addTask {
                var latencies: [Double] = []
                latencies.reserveCapacity(perTask)
                for index in 0..<perTask {
                    let event = independentEvent(task: task, index: index)
                    let began = now()
                    guard case .appended = try await ledger.append(event) else { fatalError("unexpected duplicate") }
                    latencies.append(now() - began)
                }
                return latencies
            }
        }
        return try await group.reduce(into: []) { $0.append(contentsOf: $1) }
    }
    let elapsed = now() - start
    let written = writtenBefore.flatMap { before in bytesWrittenByProcess().map { $0 - before } }
    let head = try ledger.head().seq
    precondition(head == UInt64(tasks * perTask), "expected \(tasks * perTask) events, the head is \(head)")
    return GroupCommitRun(label: label, tasks: tasks, appends: tasks * perTask, seconds: elapsed, latencies: latencies, statistics: ledger.writerStatistics, bytesWritten: written)
}

func runGroupCommitBenchmark(_ arguments: [String]) async throws {
    var tasks = 64
    var perTask = 100
    var baselinePerTask = 10
    var directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-benchmark-gc-\(getpid())").path
    var jsonPath: String?
    var rounds = 3
    var withoutSync = false
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--tasks": tasks = Int(iterator.next() ?? "") ?? tasks
        case "--appends": perTask = Int(iterator.next() ?? "") ?? perTask
        case "--baseline-appends": baselinePerTask = Int(iterator.next() ?? "") ?? baselinePerTask
        case "--dir": directory = iterator.next() ?? directory
        case "--json": jsonPath = iterator.next()
        case "--also-no-sync": withoutSync = true
        case "--rounds": rounds = max(1, Int(iterator.next() ?? "") ?? rounds)
        default:
            print("usage: ledger-benchmark group-commit [--tasks N] [--appends N per task] [--baseline-appends N per task] [--rounds N] [--also-no-sync] [--dir PATH] [--json FILE]")
            exit(2)
        }
    }
    print("group commit: \(tasks) tasks appending single durable events, \(rounds) rounds …")
    let figures = try await measureGroupCommit(tasks: tasks, perTask: perTask, baselinePerTask: baselinePerTask, rounds: rounds, directory: directory)
    let (grouped, single, sequential, roundRatios) = (figures.grouped, figures.single, figures.sequential, figures.roundRatios)
    // Diagnosis: the same concurrent appends with no flush at all, the ceiling the CPU sets.
    let noSync = withoutSync ? try await measureWithoutFlush(tasks: tasks, perTask: perTask, directory: directory) : nil
    print("")
    print("| Configuration | Appends | Events/s | p50 ms | p99 ms | max ms | Transactions | Appends per transaction | KiB written per transaction |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for run in [grouped, single, sequential] + (noSync.map { [$0] } ?? []) {
        let kibPerTransaction = run.kibPerTransaction.map { String(format: "%.1f", $0) } ?? "–"
        print(String(format: "| %@ (%d task%@) | %d | %.0f | %.2f | %.2f | %.2f | %d | %.1f | %@ |",
                     run.label, run.tasks, run.tasks == 1 ? "" : "s", run.appends, run.rate, run.percentile(0.5), run.percentile(0.99),
                     run.percentile(1.0), run.statistics.transactions, run.appendsPerTransaction,
                     kibPerTransaction))
    }
    let ratio = grouped.rate / single.rate
    let p99 = grouped.percentile(0.99)
    print("")
    print(String(format: "group commit / one transaction per append: %.1f× (target ≥ 20×) — %@; by round: %@", ratio, ratio >= 20 ? "met" : "MISSED",
                 roundRatios.map { String(format: "%.1f×", $0) }.joined(separator: ", ")))
    print(String(format: "group commit p99 append latency: %.2f ms (target ≤ 10 ms) — %@", p99, p99 <= 10 ? "met" : "MISSED"))
    if withoutSync {
        let floor = try measureRawLMDBFloor(directory: directory, records: 2_000)
        print(String(format: "raw LMDB floor (diagnosis): %.0f records/s one per durable transaction, %.0f in transactions of 32: %.1f×",
                     floor.single, floor.grouped, floor.grouped / floor.single))
    }
    if let jsonPath {
        func object(_ run: GroupCommitRun) -> String {
            String(format: #"{"label":"%@","tasks":%d,"appends":%d,"eventsPerSecond":%.1f,"p50Ms":%.3f,"p99Ms":%.3f,"maxMs":%.3f,"transactions":%d}"#,
                   run.label, run.tasks, run.appends, run.rate, run.percentile(0.5), run.percentile(0.99), run.percentile(1.0), run.statistics.transactions)
        }
        let json = #"{"groupCommit":\#(object(grouped)),"oneTransactionPerAppend":\#(object(single)),"sequential":\#(object(sequential)),"ratio":\#(String(format: "%.2f", ratio))}"# + "\n"
        try Data(json.utf8).write(to: URL(fileURLWithPath: jsonPath))
    }
}

/// The same concurrent appends as group commit's, with no flush at all (a diagnosis): the ceiling that the
/// cores, LMDB and the tasks set.
func measureWithoutFlush(tasks: Int, perTask: Int, directory: String) async throws -> GroupCommitRun {
    try await measureConcurrentAppends(label: "group commit, no flush (diagnosis)", directory: directory, tasks: tasks,
                                       perTask: perTask, maxEventsPerCommit: 4096, durable: false)
}

/// Group commit against one transaction per append, and one task alone.
struct GroupCommitFigures {
    var grouped: GroupCommitRun
    var single: GroupCommitRun
    var sequential: GroupCommitRun
    var roundRatios: [Double]
    var ratio: Double { grouped.rate / single.rate }
}

/// Measures the configurations alternately, round after round, so that a change in the disk's speed during
/// the run affects them alike; each is reported by its median round, latencies pooled over all rounds.
func measureGroupCommit(tasks: Int, perTask: Int, baselinePerTask: Int, rounds: Int, directory: String) async throws -> GroupCommitFigures {
    var groupedRuns: [GroupCommitRun] = []
    var singleRuns: [GroupCommitRun] = []
    var sequentialRuns: [GroupCommitRun] = []
    for _ in 0..<rounds {
        groupedRuns.append(try await measureConcurrentAppends(
            label: "group commit", directory: directory, tasks: tasks, perTask: perTask, maxEventsPerCommit: 4096))
        // One transaction per append is slow (one flush each): fewer appends give the same rate.
        singleRuns.append(try await measureConcurrentAppends(
            label: "one transaction per append", directory: directory, tasks: tasks, perTask: baselinePerTask, maxEventsPerCommit: 1))
        sequentialRuns.append(try await measureConcurrentAppends(
            label: "one task, one append at a time", directory: directory, tasks: 1, perTask: max(100, baselinePerTask * 10), maxEventsPerCommit: 4096))
    }
    func median(_ runs: [GroupCommitRun]) -> GroupCommitRun {
        var run = runs.sorted { $0.rate < $1.rate }[runs.count / 2]
        run.latencies = runs.flatMap(\.latencies)
        return run
    }
    return GroupCommitFigures(grouped: median(groupedRuns), single: median(singleRuns), sequential: median(sequentialRuns),
                              roundRatios: zip(groupedRuns, singleRuns).map { $0.rate / $1.rate })
}

/// The floor LMDB and the disk set for the same comparison: raw LMDB appending records of the ledger's
/// average size under sequential keys (`MDB_APPEND`), one durable transaction per record, then 32 records
/// per durable transaction (the group size the ledger reaches with 64 tasks). Single-threaded: no rules,
/// no indexes, no tasks.
func measureRawLMDBFloor(directory: String, records: Int) throws -> (single: Double, grouped: Double) {
    func rate(perTransaction: Int) throws -> Double {
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try RawLMDBLog(path: directory)
        let group = [[UInt8]](repeating: [UInt8](repeating: 0x5A, count: 756), count: perTransaction)
        let start = now()
        var written = 0
        while written < records {
            try log.append(group)
            written += perTransaction
        }
        return Double(records) / (now() - start)
    }
    return (try rate(perTransaction: 1), try rate(perTransaction: 32))
}
