import Foundation
import LMDB
@_spi(StorageEngine) import PermissionLedger
import PermissionModel
import PermissionLedgerTesting

// `ledger-benchmark suite`: the ledger side by side with raw LMDB (the floor: the same stored bytes with
// MDB_APPEND and nothing else) and with the same ledger on SQLite through GRDB (what a Swift developer would
// build instead), on one seeded workload, in one run. Prints a table of every figure and ratio with its
// target and writes them as JSON.

struct SuiteOptions {
    var events = 1_000_000
    var batch = 10_000
    var queryEvents = 10_000_000
    var queries = 2_000
    var subjects = 1_000
    var groupCommitRounds = 3
    var directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-benchmark-suite").path
    var json = "benchmark-results.json"
    var tool: String?
    var keep = false
    /// The numbers of handles of the growth part, and the subjects they are spread over in its second half.
    var growthHandles = [125_000, 250_000, 500_000, 1_000_000]
    var growthSubjects = 10_000
    /// How many times the growth part runs each command; it reports the median time and the largest peak.
    var growthRuns = 3
    /// The parts to run: append (with rebuild and bytes on disk), queries (with the import's memory), group-commit,
    /// growth, proofs, report.
    var parts: Set<String> = ["append", "queries", "group-commit", "growth", "proofs", "report"]

    static let usage = """
        usage: ledger-benchmark suite [--events N] [--batch N] [--query-events N] [--queries N] [--subjects N]
                                      [--group-commit-rounds N] [--growth-handles LIST] [--growth-subjects N] [--growth-runs N]
                                      [--tool PATH] [--dir DIR] [--json FILE] [--keep] [--only LIST]
          --events N         events of the append and rebuild workloads (1,000,000)
          --batch N          events per durable transaction of the append workload (10,000)
          --query-events N   events of the ledgers queried as of past points, imported with the tool (10,000,000)
          --queries N        as-of queries of each kind on each engine (2,000)
          --growth-handles LIST  the numbers of handles of the growth part (125000,250000,500000,1000000)
          --growth-subjects N    the subjects they are spread over in its second half (10,000)
          --growth-runs N        runs of each growth command; the median time is reported (3)
          --tool PATH        the permission-ledger executable that imports the large ledger (its peak memory is measured)
          --dir DIR          where the ledgers go; the large ones are kept there and reused by the next run
          --keep             keep the append workload's ledgers too
          --only LIST        some of: append (with rebuild and bytes on disk), queries (with the import's memory), group-commit,
                             growth (import, verify and known-handles of growing numbers of handles, with the tool),
                             proofs (checkpoint and proof latency on the --query-events ledger against a 10,000-event one),
                             report (one child's audit report on the --query-events ledger)
        """

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        func number(_ name: String) -> Int {
            guard let text = iterator.next(), let value = Int(text.replacingOccurrences(of: "_", with: "")), value > 0 else {
                print("\(name) needs a positive number\n\(Self.usage)")
                exit(2)
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--events": events = number(argument)
            case "--batch": batch = number(argument)
            case "--query-events": queryEvents = number(argument)
            case "--queries": queries = number(argument)
            case "--subjects": subjects = number(argument)
            case "--group-commit-rounds": groupCommitRounds = number(argument)
            case "--tool": tool = iterator.next()
            case "--dir": directory = iterator.next() ?? directory
            case "--json": json = iterator.next() ?? json
            case "--keep": keep = true
            case "--growth-handles":
                growthHandles = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0.replacingOccurrences(of: "_", with: "")) }
                guard !growthHandles.isEmpty, growthHandles.allSatisfy({ $0 > 0 }) else {
                    print("--growth-handles takes a list of positive numbers\n\(Self.usage)")
                    exit(2)
                }
            case "--growth-subjects": growthSubjects = number(argument)
            case "--growth-runs": growthRuns = number(argument)
            case "--only":
                parts = Set((iterator.next() ?? "").split(separator: ",").map(String.init))
                guard !parts.isEmpty, parts.isSubset(of: ["append", "queries", "group-commit", "growth", "proofs", "report"]) else {
                    print("--only takes a list of append, queries, group-commit, growth, proofs and report\n\(Self.usage)")
                    exit(2)
                }
            default:
                print(Self.usage)
                exit(argument == "--help" || argument == "-h" ? 0 : 2)
            }
        }
    }
}

/// One line of the table: a figure for each engine that has one, and the ratio with its target.
struct Figure {
    var workload: String
    var unit: String
    var ledger: Double
    /// The same LMDB operations as the ledger's, performed alone (``OperationTrace``), in the ledger's unit.
    var floor: Double?
    var raw: Double?
    var sqlite: Double?
    var baseline: Double?
    /// The ratio the target is about, what it is (`ledger / SQLite`, say), and the target.
    var ratio: Double?
    var ratioName: String?
    var target: String
    var met: Bool?
    var note: String = ""
}

func log(_ text: String) {
    FileHandle.standardError.write(Data("\(text)\n".utf8))
}

func runSuite(_ arguments: [String]) async throws {
    let options = SuiteOptions(arguments)
    let started = Date()
    try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
    var figures: [Figure] = []

    if options.parts.contains("append") {
        log("1/5 batched durable append: \(options.events) events in transactions of \(options.batch), three engines interleaved …")
        let appendRun = try measureAppend(options)
        figures += appendRun.figures
        log("2/5 rebuilding every projection from the \(options.events)-event log …")
        figures += try measureRebuild(appendRun, options: options)
        if !options.keep { try? FileManager.default.removeItem(atPath: appendRun.directory) }
    }
    if options.parts.contains("queries") {
        log("3/5 as-of queries on ledgers of \(options.queryEvents) events (built once, kept in \(options.directory)) …")
        figures += try measureQueries(options)
    }
    if options.parts.contains("group-commit") {
        let (tasks, perTask, directory) = (64, 100, options.directory + "/group-commit")
        log("4/5 group commit: \(tasks) tasks appending single durable events, \(options.groupCommitRounds) rounds …")
        let gc = try await measureGroupCommit(tasks: tasks, perTask: perTask, baselinePerTask: 10, rounds: options.groupCommitRounds,
                                              directory: directory)
        let p99 = gc.grouped.percentile(0.99)
        figures.append(Figure(
            workload: "concurrent durable single appends, \(tasks) tasks", unit: "events/s", ledger: gc.grouped.rate, baseline: gc.single.rate,
            ratio: gc.ratio, ratioName: "group commit / one transaction per append", target: "≥ 20", met: gc.ratio >= 20,
            note: String(format: "p99 %.2f ms (target ≤ 10 ms: %@); rounds %@", p99, p99 <= 10 ? "met" : "missed",
                         gc.roundRatios.map { String(format: "%.1f×", $0) }.joined(separator: ", "))
                + kibPerTransaction(gc.grouped, "a group transaction") + kibPerTransaction(gc.single, "a one-append transaction")))
        // Two diagnoses: the same appends with no flush at all, and what raw LMDB gains by grouping on this disk.
        let noFlush = try await measureWithoutFlush(tasks: tasks, perTask: perTask, directory: directory)
        figures.append(Figure(
            workload: "  the same, commits not flushed (diagnosis: the flush free)", unit: "events/s", ledger: noFlush.rate,
            baseline: gc.single.rate, ratio: noFlush.rate / gc.single.rate, ratioName: "not flushed / one durable transaction per append",
            target: "(ceiling)", met: nil, note: String(format: "%.1f appends per transaction", noFlush.appendsPerTransaction)))
        let floor = try measureRawLMDBFloor(directory: directory, records: 2_000)
        figures.append(Figure(
            workload: "  raw LMDB, 32 records per durable transaction (diagnosis: the floor of this disk)", unit: "records/s",
            ledger: .nan, raw: floor.grouped, baseline: floor.single, ratio: floor.grouped / floor.single,
            ratioName: "32 per transaction / one per transaction", target: "(floor)", met: nil,
            note: "the ledger's average record size under sequential keys with MDB_APPEND, one thread, no rules and no indexes"))
    }
    if options.parts.contains("growth") {
        let sizes = options.growthHandles.map { $0.formatted() }.joined(separator: ", ")
        log("5/5 growth: import, verify and known-handles of \(sizes) handles, of one subject and spread over "
            + "\(options.growthSubjects.formatted()) subjects …")
        figures += try measureGrowth(options)
    }
    if options.parts.contains("proofs") {
        log("proofs: checkpoint, inclusion and consistency proof latency on \(options.queryEvents) events against 10,000 …")
        figures += try measureProofs(options)
    }

    if options.parts.contains("report") {
        log("report: one child's audit report on \(options.queryEvents) events …")
        figures += try measureReport(options)
    }

    printTable(figures, options: options, started: started)
    try writeJSON(figures, options: options, started: started)
}

/// `; <what> wrote N KiB` when the process's writes were counted.
private func kibPerTransaction(_ run: GroupCommitRun, _ what: String) -> String {
    run.kibPerTransaction.map { String(format: "; %@ wrote %.0f KiB", what, $0) } ?? ""
}

// MARK: - Append and bytes on disk

struct AppendRun {
    var directory: String
    /// The ledger's directory; the `Ledger` itself is released, so that the rebuilds can open it their way.
    var ledgerPath: String
    var sqlite: SQLiteLedger
    var events: Int
    var figures: [Figure]
}

func measureAppend(_ options: SuiteOptions) throws -> AppendRun {
    let directory = options.directory + "/append"
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let ledger = try Ledger(path: directory + "/ledger", options: .init(mapSize: 1 << 30, durable: true))
    let raw = try RawLMDBLog(path: directory + "/raw")
    let sqlite = try SQLiteLedger(path: directory + "/ledger.sqlite")
    // The floor: each batch appended first, off the clock, to a ledger of its own whose LMDB operations are
    // recorded; the operations are then performed again alone, durably, in an environment of their own with the
    // same databases. Its keys and tokens are its own random ones: the same operations on keys of the same
    // shapes, at other places in the B-trees.
    let traced = try Ledger(path: directory + "/traced", options: .init(mapSize: 1 << 30, durable: false))
    // The floor, then its diagnoses (`FloorDiagnosis`): the same operations, each batch's transformed.
    var rewrittenKeys: UInt64 = 0
    let transforms: [(name: String, trace: (OperationTrace, [String: Database]) -> OperationTrace)] =
        [("floor", { trace, _ in trace })] + FloorDiagnosis.allCases.map { diagnosis in
            ("floor-\(diagnosis)", { trace, recorded in diagnosis.transform(trace, recorded, counter: &rewrittenKeys) })
        }
    var floors = try transforms.map { try FloorReplica(path: directory + "/" + $0.name) }
    var floorOperations = 0
    var floorWrites: [Database: (operations: Int, bytes: Int)] = [:]
    let engines = 3 + floors.count
    var times = [Double](repeating: 0, count: engines)
    var written: [Int]? = bytesWrittenByProcess().map { _ in [Int](repeating: 0, count: engines) }
    try forEachAppendBatch(options) { batch, round in
        // Encoding for raw LMDB is not part of its floor: the ledger's stored bytes, made before the clock starts.
        let encoded = raw.encode(batch)
        let (_, trace) = try OperationTrace.recording { _ = try traced.appendSynchronously(batch) }
        floorOperations += trace.count
        let recorded = traced.storageEnvironment.databases
        for (database, written) in trace.writes() {
            let before = floorWrites[database] ?? (0, 0)
            floorWrites[database] = (before.operations + written.operations, before.bytes + written.bytes)
        }
        for index in floors.indices { try floors[index].open(recorded) }
        let traces = transforms.map { $0.trace(trace, recorded) }
        let steps: [() throws -> Void] = [
            { let summary = try ledger.appendSynchronously(batch); precondition(summary.appended == batch.count) },
            { try raw.append(encoded) },
            { let appended = try sqlite.append(batch); precondition(appended == batch.count) },
        ] + zip(floors, traces).map { floor, trace in { try floor.perform(trace) } }
        for engine in turns(steps.count, round: round) {
            let writtenBefore = bytesWrittenByProcess()
            times[engine] += try seconds(steps[engine])
            if let writtenBefore, let writtenAfter = bytesWrittenByProcess() { written?[engine] += writtenAfter - writtenBefore }
        }
        if (round + 1) % 20 == 0 { log("  \(min((round + 1) * options.batch, options.events)) events") }
    }
    // The same rules over the same events give the same chain: raw LMDB and SQLite store unsealed records, whose
    // chains are equal; the ledger seals personal fields under salts of its own (docs/STORAGE.md), so its chain
    // differs from theirs, and it is checked to hold as many events.
    let ledgerHead = try ledger.head()
    precondition(raw.head == sqlite.head.hash && ledgerHead.seq == sqlite.head.seq, "the three engines hold different logs")
    let n = Double(options.events)
    let rates = times.map { n / $0 }
    // Where the floor's writes go: each table's writes per event, and their keys' and values' bytes.
    let names = Dictionary(uniqueKeysWithValues: traced.storageEnvironment.databases.map { ($1, $0) })
    let perTable = floorWrites.sorted { $0.value.operations > $1.value.operations }.map { database, written in
        String(format: "%@ %.2f (%.0f B)", names[database] ?? "?", Double(written.operations) / n, Double(written.bytes) / n)
    }
    let ceilings = try measureAppendCeilings(options, directory: directory, head: ledgerHead)
    let ledgerBytes = fileSize(directory + "/ledger/data.mdb")
    let sqliteBytes = try sqlite.bytesOnDisk()
    // Bytes written per event: the file is what stays, this is what each commit wrote to get there. A commit
    // rewrites every page its B-tree changes, so inserts at scattered keys write whole pages for a few bytes each.
    let writes = written.map { w in
        Figure(workload: "bytes written per event during the append", unit: "bytes", ledger: Double(w[0]) / n,
               floor: Double(w[3]) / n, raw: Double(w[1]) / n, sqlite: Double(w[2]) / n, ratio: Double(w[0]) / Double(w[2]),
               ratioName: "ledger / SQLite", target: "(none)", met: nil,
               note: "wchar of /proc/self/io around each engine's transactions: every page a commit writes")
    }
    return AppendRun(directory: directory, ledgerPath: directory + "/ledger", sqlite: sqlite, events: options.events, figures: [
        Figure(workload: "batched durable append, \(options.events) events in transactions of \(options.batch)", unit: "events/s",
               ledger: rates[0], floor: rates[3], raw: rates[1], sqlite: rates[2], ratio: rates[0] / rates[1], ratioName: "ledger / raw LMDB",
               target: "≥ 0.25", met: rates[0] / rates[1] >= 0.25,
               note: String(format: "floor: the ledger's LMDB operations (%.1f an event), recorded and performed again alone, one durable transaction a batch; its writes per event, by table: ", Double(floorOperations) / n) + perTable.joined(separator: ", ")),
    ] + FloorDiagnosis.allCases.enumerated().map { index, diagnosis in
        let engine = 4 + index
        let bytes = written.map { String(format: "; %.0f bytes written an event (the floor's: %.0f)", Double($0[engine]) / n, Double($0[3]) / n) } ?? ""
        return Figure(workload: "  the floor with \(diagnosis.label) (diagnosis)", unit: "events/s", ledger: rates[0],
                      floor: rates[engine], target: "(floor)", met: nil, note: diagnosis.note + bytes)
    } + [
        Figure(workload: "  the same, against SQLite", unit: "events/s", ledger: rates[0], sqlite: rates[2],
               ratio: rates[0] / rates[2], ratioName: "ledger / SQLite", target: "≥ 5", met: rates[0] / rates[2] >= 5),
        Figure(workload: "  the same ledger, its commits not flushed (diagnosis: the flush free)", unit: "events/s",
               ledger: ceilings.notFlushed, sqlite: rates[2], ratio: ceilings.notFlushed / rates[2], ratioName: "ledger / SQLite",
               target: "(ceiling)", met: nil,
               note: "Ledger.Options(durable: false), the same events and transactions, timed after the three engines"),
        Figure(workload: "  the rules alone in memory, no storage (diagnosis)", unit: "events/s",
               ledger: ceilings.rulesAlone, raw: rates[1], ratio: ceilings.rulesAlone / rates[1], ratioName: "rules alone / raw LMDB",
               target: "(ceiling)", met: nil,
               note: "InMemoryRules: the rules, the record's encoding and the chain hash that every append runs, as the ledger runs them, and nothing stored: the ledger's own Swift work before LMDB does anything"),
        Figure(workload: "bytes on disk per event, after \(options.events) events", unit: "bytes", ledger: Double(ledgerBytes) / n,
               floor: Double(fileSize(directory + "/floor/data.mdb")) / n, raw: Double(raw.bytesOnDisk) / n, sqlite: Double(sqliteBytes) / n, ratio: Double(ledgerBytes) / Double(sqliteBytes),
               ratioName: "ledger / SQLite", target: "(none)", met: nil,
               note: "file sizes: LMDB data.mdb; SQLite database + WAL after a checkpoint"),
    ] + (writes.map { [$0] } ?? []))
}

/// An environment of its own in which the append's recorded LMDB operations are performed again, durably, one
/// transaction a batch, with the same databases as the ledger that recorded them.
struct FloorReplica {
    let environment: Environment
    /// Each database of the recording ledger's environment, by its handle there, to this one's.
    private(set) var databases: [Database: Database] = [:]

    init(path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        environment = try Environment(path: path, options: .init(mapSize: 1 << 30, maxDatabases: 64))
    }

    /// Opens here the databases of `recorded` (the recording environment's, by name) not opened yet.
    mutating func open(_ recorded: [String: Database]) throws {
        for (name, database) in recorded where databases[database] == nil {
            databases[database] = try environment.openDatabase(name, create: true)
        }
    }

    func perform(_ trace: OperationTrace) throws {
        _ = try environment.perform(trace, asWrite: true, databases: databases)
    }
}

/// The diagnoses of the append's floor: its operations performed again with some of their writes elsewhere, in
/// an environment of their own, to show what those writes cost a commit.
enum FloorDiagnosis: CaseIterable, CustomStringConvertible {
    /// Each database's writes of a batch in key order, after the batch's reads.
    case sorted
    /// The lookups by id, token and time written at the end of their tables.
    case lookupsAppended
    /// The indexes keyed by subject written at the end of their tables.
    case perSubjectAppended
    /// Every index written at the end of its table.
    case allAppended
    /// The indexes keyed by subject written into one table, each after the subject's latest entry.
    case subjectHistory

    /// The indexes keyed by an id, a token or a time, which each batch writes all over.
    static let lookups: [StorageTable] = [.eventIDs, .questions, .expiries, .questionsByAsked, .handleSubjects]
    /// The indexes keyed by subject first, where each batch writes on a page or more of every subject it meets.
    static let perSubject: [StorageTable] = [.subjectEvents, .handles, .handleSets, .handleValues, .permissions, .keys, .subjects]
    /// Every table but the log and the Merkle tree, which are appended already.
    static let indexes = lookups + perSubject + [.byRecordedAt, .treeTop]

    var description: String {
        switch self {
        case .sorted: "sorted"
        case .lookupsAppended: "lookups"
        case .perSubjectAppended: "per-subject"
        case .allAppended: "all"
        case .subjectHistory: "subject-history"
        }
    }

    var label: String {
        switch self {
        case .sorted: "each batch's writes in key order"
        case .lookupsAppended: "the lookups by id, token and time written at their ends"
        case .perSubjectAppended: "the indexes by subject written at their ends"
        case .allAppended: "every index written at its end"
        case .subjectHistory: "the indexes by subject in one history per subject"
        }
    }

    var note: String {
        func names(_ tables: [StorageTable]) -> String { tables.map(\.rawValue).joined(separator: ", ") }
        switch self {
        case .sorted:
            return "the same operations, each database's writes of a batch sorted by key after the batch's reads: what writing the indexes in key order would leave"
        case .lookupsAppended, .perSubjectAppended, .allAppended:
            return "the same operations, each write to \(names(tables)) made an append at the end of its table (its reads kept): what those indexes cost each commit"
        case .subjectHistory:
            return "the same operations, each write to \(names(tables)) put into one table under the subject and a number that grows (its reads kept): each subject's writes of a batch on the last page of its history"
        }
    }

    var tables: [StorageTable] {
        switch self {
        case .sorted: []
        case .lookupsAppended: Self.lookups
        case .perSubjectAppended, .subjectHistory: Self.perSubject
        case .allAppended: Self.indexes
        }
    }

    /// `trace` with this diagnosis's writes rewritten; `recorded` names the recording environment's databases,
    /// and `counter` numbers the keys the rewritten writes go to.
    func transform(_ trace: OperationTrace, _ recorded: [String: Database], counter: inout UInt64) -> OperationTrace {
        let databases = Set(tables.compactMap { recorded[$0.rawValue] })
        switch self {
        case .sorted:
            return trace.inKeyOrder()
        case .lookupsAppended, .perSubjectAppended, .allAppended:
            return trace.appending(databases, counter: &counter)
        case .subjectHistory:
            // The subject's part of the key (up to its NUL, or the whole key of `subjects`), then a number that grows.
            return trace.rewriting(databases, into: recorded[StorageTable.subjectEvents.rawValue]) { key in
                counter += 1
                let subject = key.firstIndex(of: 0).map { key[...$0] } ?? key[...]
                return Array(subject) + withUnsafeBytes(of: counter.bigEndian) { Array($0) }
            }
        }
    }
}

/// The append workload's batches, generated from its seed in order, each with its round (its index): the same
/// events for the three engines and for the diagnoses.
func forEachAppendBatch(_ options: SuiteOptions, _ body: (_ batch: [PermissionEvent], _ round: Int) throws -> Void) rethrows {
    var generator = EventGenerator(seed: 20_261_122, subjects: options.subjects)
    var remaining = options.events
    var round = 0
    while remaining > 0 {
        let batch = generator.next(min(options.batch, remaining))
        remaining -= batch.count
        try body(batch, round)
        round += 1
    }
}

/// Two diagnoses of the append, each over the same events in the same batches, timed after the three engines
/// so that they never share the disk with them: the ledger with its commits not flushed (what the flush
/// costs), and the rules alone in memory (what the ledger's own Swift work costs before LMDB does anything).
/// They take turns going first; both must end at the durable ledger's head.
func measureAppendCeilings(_ options: SuiteOptions, directory: String, head: LogHead) throws -> (notFlushed: Double, rulesAlone: Double) {
    let path = directory + "/ledger-not-flushed"
    defer { try? FileManager.default.removeItem(atPath: path) }
    log("  diagnoses: the same events with the commits not flushed, and the rules alone in memory …")
    let ledger = try Ledger(path: path, options: .init(mapSize: 1 << 30, durable: false))
    var rules = InMemoryRules()
    var times = [0.0, 0.0]
    try forEachAppendBatch(options) { batch, round in
        let steps: [() throws -> Void] = [
            { let summary = try ledger.appendSynchronously(batch); precondition(summary.appended == batch.count) },
            { let appended = try rules.apply(batch); precondition(appended == batch.count) },
        ]
        for way in turns(steps.count, round: round) { times[way] += try seconds(steps[way]) }
    }
    let notFlushedHead = try ledger.head()
    precondition(notFlushedHead.seq == head.seq && rules.head.seq == head.seq, "a diagnosis ended at another seq than the durable ledger")
    return (Double(options.events) / times[0], Double(options.events) / times[1])
}

// MARK: - Rebuild

func measureRebuild(_ run: AppendRun, options: SuiteOptions) throws -> [Figure] {
    // Each way rebuilds twice, taking turns going first, and its faster rebuild counts: one rebuild writes
    // hundreds of megabytes, and on a shared 2-core machine the same rebuild has been seen to take 24 s and
    // then 33 s, as the disk flushes what the last one wrote or the host takes the cores.
    //
    // The ledger is timed as `permission-ledger rebuild` runs, opening it with LMDB's map writable
    // (`Ledger.rebuildProjections(path:)`, the open and the reservation of its file's room included), reading
    // its log ahead on a second core; also reading on the rebuilding thread alone, as SQLite's does; and in
    // place in a ledger already open, as an embedding app calls `rebuildProjections()`.
    let before = try Ledger(path: run.ledgerPath, options: .init(readOnly: true)).head()
    var heads: [LogHead] = []
    var ledgerSeconds = Double.infinity, oneThreadSeconds = Double.infinity, inPlaceSeconds = Double.infinity
    var sqliteSeconds = Double.infinity
    for round in 0..<2 {
        let steps: [() throws -> Void] = [
            { ledgerSeconds = min(ledgerSeconds, try seconds {
                heads.append(try Ledger.rebuildProjections(path: run.ledgerPath, readingAhead: true)) }) },
            { sqliteSeconds = min(sqliteSeconds, try seconds { try run.sqlite.rebuildProjections() }) },
            { oneThreadSeconds = min(oneThreadSeconds, try seconds {
                heads.append(try Ledger.rebuildProjections(path: run.ledgerPath, readingAhead: false)) }) },
            { inPlaceSeconds = min(inPlaceSeconds, try seconds {
                let ledger = try Ledger(path: run.ledgerPath)
                try ledger.rebuildProjections(readingAhead: true)
                heads.append(try ledger.head()) }) },
        ]
        for step in turns(steps.count, round: round) { try steps[step]() }
    }
    precondition(heads.allSatisfy { $0 == before } && run.sqlite.head.seq == before.seq, "a rebuild changed the head")
    let n = Double(run.events)
    let ratio = sqliteSeconds / ledgerSeconds
    return [
        Figure(workload: "rebuild every projection from a \(run.events)-event log", unit: "events/s",
               ledger: n / ledgerSeconds, sqlite: n / sqliteSeconds, ratio: ratio, ratioName: "ledger / SQLite",
               target: "≥ 5", met: ratio >= 5,
               note: "one durable transaction each, the chain checked as it is read; the ledger as `permission-ledger rebuild` runs (its map writable, its log read ahead on a second thread); the faster of two rebuilds each, taking turns"),
        Figure(workload: "  the same, the ledger reading its log on the rebuilding thread", unit: "events/s",
               ledger: n / oneThreadSeconds, sqlite: n / sqliteSeconds, ratio: sqliteSeconds / oneThreadSeconds,
               ratioName: "ledger / SQLite", target: "(one core)", met: nil),
        Figure(workload: "  the same, in place in an open ledger (its map read-only)", unit: "events/s",
               ledger: n / inPlaceSeconds, sqlite: n / sqliteSeconds, ratio: sqliteSeconds / inPlaceSeconds,
               ratioName: "ledger / SQLite", target: "(rebuildProjections())", met: nil),
    ]
}

// MARK: - As-of queries and the import's memory

func measureQueries(_ options: SuiteOptions) throws -> [Figure] {
    let count = options.queryEvents
    let folder = options.directory + "/query-\(count)"
    let ledgerPath = folder + "/ledger"
    let sqlitePath = folder + "/ledger.sqlite"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let seed = 7_000 + UInt64(count)
    let memoryFigure = "peak resident memory of `permission-ledger import` of \(count) events"
    let reusing = (try? Ledger(path: ledgerPath, options: .init(readOnly: true)).head().seq) == UInt64(count)
    if !reusing { try? FileManager.default.removeItem(atPath: ledgerPath) }
    var generator = EventGenerator(seed: seed, subjects: options.subjects)
    let figure: Figure
    if let tool = options.tool, FileManager.default.isExecutableFile(atPath: tool) {
        // Imported through the tool from a stream of JSON Lines, as an operator would, measuring the importer's
        // peak memory; into a scratch ledger when the queried one is kept from an earlier run.
        let target = reusing ? folder + "/import-scratch" : ledgerPath
        try? FileManager.default.removeItem(atPath: target)
        log("  importing \(count) events with \(tool) import …")
        let (seconds, peak) = try importStreaming(tool: tool, ledger: target) { write in
            generator.generate(count, progress: "sent") { write(jsonLines($0)) }
        }
        if reusing { try? FileManager.default.removeItem(atPath: target) }
        figure = Figure(
            workload: memoryFigure, unit: "MiB", ledger: Double(peak) / 1_048_576, target: "< 1024", met: peak < 1 << 30,
            note: String(format: "one all-or-nothing import from standard input: %.0f s, %.0f events/s", seconds, Double(count) / seconds))
    } else {
        if !reusing {
            // Without the tool: built in process, in a scope of its own so that it is closed before it is opened
            // again to be queried.
            log("  building the ledger of \(count) events in process (no --tool: the import's memory is not measured) …")
            try {
                let building = try Ledger(path: ledgerPath, options: .init(mapSize: 1 << 30, durable: false))
                try generator.generate(count, progress: "appended") { try building.appendSynchronously($0) }
            }()
        } else {
            generator.generate(count) { _ in }
        }
        figure = Figure(workload: memoryFigure, unit: "MiB", ledger: .nan, target: "< 1024", met: nil, note: "not measured: no --tool")
    }
    return try measureQueries(options, ledgerPath: ledgerPath, sqlitePath: sqlitePath, seed: seed, sample: generator.askedSample, figures: [figure])
}

/// The as-of queries themselves, on the ledger at `ledgerPath` and its SQLite twin (built here when missing).
func measureQueries(
    _ options: SuiteOptions, ledgerPath: String, sqlitePath: String, seed: UInt64, sample: [(id: UUID, seq: UInt64)], figures: [Figure]
) throws -> [Figure] {
    let count = options.queryEvents
    var figures = figures
    let ledger = try Ledger(path: ledgerPath, options: .init(readOnly: true))

    // SQLite: built in process without flushing each commit (building is not what is measured).
    var sqlite = try SQLiteLedger(path: sqlitePath, durable: false)
    if sqlite.head.seq != UInt64(count) {
        sqlite = try { () throws -> SQLiteLedger in
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sqlitePath + suffix) }
            return try SQLiteLedger(path: sqlitePath, durable: false)
        }()
        log("  building the SQLite ledger of \(count) events …")
        var generator = EventGenerator(seed: seed, subjects: options.subjects)
        try generator.generate(count, progress: "appended") { try sqlite.append($0) }
    }
    let ledgerHead = try ledger.head()
    precondition(ledgerHead.seq == sqlite.head.seq, "the ledger and SQLite hold different logs")

    // Both measured with a warm page cache, as a busy server would run: each database's files are read once.
    for file in [ledgerPath + "/data.mdb", sqlitePath, sqlitePath + "-wal"] { warmPageCache(file) }

    // The same random queries on both, as of random points, each in a read transaction of its own.
    let handles = EventGenerator(seed: 1, subjects: options.subjects)
    let head = UInt64(count)
    let kinds = ["question", "known handles", "is known handle", "permissions"]
    // Per kind: the ledger and SQLite, then warm the ledger, SQLite and the floor (the ledger's LMDB operations
    // performed alone).
    var times = [[Double]](repeating: [0, 0, 0, 0, 0], count: kinds.count)
    let environment = ledger.storageEnvironment
    var floorOperations = 0
    var mismatches = 0
    // Two passes over the same queries: the first as the suite has always measured them (each engine's query
    // then the other's, in turns), the second warm, against the floor.
    for pass in 0..<2 {
        var rng = SeededRandom(seed: 99)
        for round in 0..<(options.queries + options.queries / 10) {
            let warmUp = round < options.queries / 10
            let (id, askedSeq) = sample[Int.random(in: 0..<sample.count, using: &rng)]
            let kid = Int.random(in: 0..<options.subjects, using: &rng)
            let subject = "kid-\(kid)"
            let handle = handles.handle(kid * 40 + Int.random(in: 0..<40, using: &rng))
            let questionPoint = UInt64.random(in: askedSeq...head, using: &rng)
            let point = UInt64.random(in: 1...head, using: &rng)
            // Each query returns what its engine answers, typed as the engine types it; the clock stops there.
            // The answer is then put in one comparable form, off the clock (the same work for both engines).
            typealias Answer = () -> QueryAnswer?
            let queries: [(ledger: () throws -> Answer, sqlite: () throws -> Answer)] = [
                ({ let status = try ledger.read(asOf: .seq(questionPoint)) { try $0.question(id) }
                   return { status.map { .question(state: $0.state.rawValue, eventSeqs: $0.events.map(\.seq)) } } },
                 { let answer = try sqlite.question(id, asOf: questionPoint); return { answer } }),
                ({ let known = try ledger.read(asOf: .seq(point)) { try $0.knownHandles(subject: subject) }
                   return { .handles(known.map(\.handle.value).sorted()) } },
                 { let rows = try sqlite.knownHandles(subject: subject, asOf: point); return { .handles(rows.map(\.handle.value).sorted()) } }),
                ({ let known = try ledger.read(asOf: .seq(point)) { try $0.isKnownHandle(handle, subject: subject) }; return { .isKnown(known) } },
                 { let known = try sqlite.isKnownHandle(handle, subject: subject, asOf: point); return { .isKnown(known) } }),
                ({ let permissions = try ledger.read(asOf: .seq(point)) { try $0.permissions(subject: subject) }
                   return { .permissions(permissions.map { "\($0.permission.rawValue)=\($0.state.rawValue)" }.sorted()) } },
                 { let rows = try sqlite.permissions(subject: subject, asOf: point)
                   return { .permissions(rows.map { "\($0.permission.rawValue)=\($0.state.rawValue)" }.sorted()) } }),
            ]
            for (kind, query) in queries.enumerated() where pass == 0 {
                var answers: [QueryAnswer?] = [nil, nil]
                for engine in turns(2, round: round) {
                    var answer: Answer = { nil }
                    let elapsed = try seconds { answer = try engine == 0 ? query.ledger() : query.sqlite() }
                    if !warmUp { times[kind][engine] += elapsed }
                    answers[engine] = answer()
                }
                if answers[0] != answers[1] { mismatches += 1 }
            }
            for (kind, query) in queries.enumerated() where pass == 1 {
                // Warm: each query run first off the clock, the ledger's with its LMDB operations recorded, so that
                // the ledger, its floor (those operations performed again alone, with LMDB's C API) and SQLite each
                // run a query whose pages and code have just been used, in turns.
                let (_, trace) = try OperationTrace.recording { _ = try query.ledger() }
                _ = try query.sqlite()
                for engine in turns(3, round: round) {
                    let elapsed = try seconds {
                        switch engine {
                        case 0: _ = try query.ledger()
                        case 1: _ = try query.sqlite()
                        default: _ = try environment.perform(trace)
                        }
                    }
                    if !warmUp { times[kind][2 + engine] += elapsed }
                }
                if !warmUp { floorOperations += trace.count }
            }
        }
    }
    precondition(mismatches == 0, "\(mismatches) queries answered differently by the ledger and SQLite")
    let n = Double(options.queries)
    func total(_ column: Int) -> Double { times.reduce(0) { $0 + $1[column] } }
    let ratio = total(1) / total(0)
    let warmRatio = total(3) / total(2)
    let floorRatio = total(2) / total(4)
    figures.insert(contentsOf: [Figure(
        workload: "as-of queries on a \(count)-event ledger (the four kinds below, mixed)", unit: "queries/s",
        ledger: n * 4 / total(0), sqlite: n * 4 / total(1), ratio: ratio, ratioName: "ledger / SQLite",
        target: "≥ 10", met: ratio >= 10, note: "\(options.queries) of each kind as of random points, page cache warm; every answer equal on both")]
        + kinds.indices.map { kind in
            Figure(workload: "  \(kinds[kind])", unit: "queries/s", ledger: n / times[kind][0], sqlite: n / times[kind][1],
                   ratio: times[kind][1] / times[kind][0], ratioName: "ledger / SQLite", target: "", met: nil)
        }
        + [Figure(
            workload: "the same queries, each run twice, the second time timed: warm, against the floor", unit: "queries/s",
            ledger: n * 4 / total(2), floor: n * 4 / total(4), sqlite: n * 4 / total(3), ratio: warmRatio, ratioName: "ledger / SQLite",
            target: "≥ 10; ≤ 3× floor", met: warmRatio >= 10 && floorRatio <= 3,
            note: String(format: "a second pass over the same queries: each run once off the clock, the ledger's with its LMDB operations recorded, then the ledger, SQLite and the floor in turns; the floor: those operations (%.1f a query on average) performed again alone in one read transaction, with LMDB's C API", Double(floorOperations) / (n * 4)))]
        + kinds.indices.map { kind in
            let fromFloor = times[kind][2] / times[kind][4]
            return Figure(workload: "  \(kinds[kind]), warm", unit: "queries/s", ledger: n / times[kind][2], floor: n / times[kind][4],
                          sqlite: n / times[kind][3], ratio: times[kind][3] / times[kind][2], ratioName: "ledger / SQLite",
                          target: "≤ 3× floor", met: fromFloor <= 3)
        }, at: 0)
    figures.append(Figure(workload: "bytes on disk per event, after \(count) events", unit: "bytes",
                          ledger: Double(fileSize(ledgerPath + "/data.mdb")) / Double(count), sqlite: Double(try sqlite.bytesOnDisk()) / Double(count),
                          target: "(none)", met: nil))
    return figures
}

/// Reads a file through once, so that its pages sit in the page cache.
func warmPageCache(_ path: String) {
    guard let handle = FileHandle(forReadingAtPath: path) else { return }
    defer { try? handle.close() }
    while let chunk = try? handle.read(upToCount: 8 << 20), !chunk.isEmpty {}
}

/// Runs `tool import --ledger ledger -`, feeding it what `produce` writes; returns the seconds it took and its
/// peak resident memory in bytes (from `wait4`).
/// Runs `tool import` on a pipe that `produce` writes to; returns the seconds it took and the importer's peak
/// resident memory.
///
/// The peak is the importer's own `ru_maxrss`, as GNU time (`/usr/bin/time -f %M`) reports it for a process it
/// forked. This process's `wait4` cannot give it: a child made by `posix_spawn` (a `vfork`) runs in this process's
/// address space until it execs, and Linux carries that address space's high-water mark over into the child's
/// `ru_maxrss`. After the append workload this process's own peak is larger than the import's, and was reported
/// as the import's. Without GNU time, `wait4`'s figure is returned, which is only an upper bound.
func importStreaming(tool: String, ledger: String, produce: ((String) -> Void) -> Void) throws -> (seconds: Double, peakBytes: Int) {
    var pipe: [Int32] = [0, 0]
    guard Foundation.pipe(&pipe) == 0 else { throw POSIXError(.EPIPE) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe[0], 0)
    posix_spawn_file_actions_addclose(&actions, pipe[1])
    let gnuTime = "/usr/bin/time"
    let peakFile = NSTemporaryDirectory() + "ledger-benchmark-import-peak-\(getpid())"
    try? FileManager.default.removeItem(atPath: peakFile)
    let timed = FileManager.default.isExecutableFile(atPath: gnuTime)
    let arguments = (timed ? [gnuTime, "-f", "%M", "-o", peakFile] : []) + [tool, "import", "--ledger", ledger, "-"]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let start = now()
    let status = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
    guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
    close(pipe[0])
    let output = FileHandle(fileDescriptor: pipe[1], closeOnDealloc: true)
    produce { text in output.write(Data(text.utf8)) }
    try output.close()
    var exitStatus: Int32 = 0
    var usage = rusage()
    _ = wait4(pid, &exitStatus, 0, &usage)
    let elapsed = now() - start
    guard exitStatus == 0 else {
        print("\(tool) import exited with status \(exitStatus)")
        exit(1)
    }
    if timed {
        defer { try? FileManager.default.removeItem(atPath: peakFile) }
        let text = (try? String(contentsOfFile: peakFile, encoding: .utf8)) ?? ""
        guard let kib = text.split(whereSeparator: \.isNewline).last.flatMap({ Int($0) }) else {
            print("\(gnuTime) reported no peak memory for the import: \(text)")
            exit(1)
        }
        log("  the import's peak resident memory: \(kib / 1024) MiB by GNU time (wait4 of /usr/bin/time: \(usage.ru_maxrss / 1024) MiB)")
        return (elapsed, kib * 1024)
    }
    return (elapsed, usage.ru_maxrss * 1024)
}

// MARK: - Output

func printTable(_ figures: [Figure], options: SuiteOptions, started: Date) {
    func number(_ value: Double?) -> String {
        guard let value, !value.isNaN else { return "–" }
        if value >= 100 { return value.formatted(.number.precision(.fractionLength(0))) }
        return String(format: "%.2f", value)
    }
    let header = ["Workload", "Unit", "Ledger", "Floor", "Ledger / floor", "Raw LMDB", "SQLite", "Baseline", "Ratio", "Target", "Met"]
    var rows = [header]
    for f in figures {
        // The ledger's time (or size) over the floor's: how many times the floor's work the ledger's takes.
        let distance = f.floor.map { floor in f.unit.hasSuffix("/s") ? floor / f.ledger : f.ledger / floor }
        rows.append([f.workload, f.unit, number(f.ledger), number(f.floor), distance.map { String(format: "%.2f×", $0) } ?? "–",
                     number(f.raw), number(f.sqlite), number(f.baseline),
                     f.ratio.map { String(format: "%.2f×", $0) + (f.ratioName.map { " (\($0))" } ?? "") } ?? "–",
                     f.target, f.met.map { $0 ? "yes" : "NO" } ?? ""])
    }
    print("")
    print("PermissionLedger side by side, \(ISO8601DateFormatter().string(from: started)), \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print("")
    print("| " + header.joined(separator: " | ") + " |")
    print("|" + header.indices.map { $0 < 2 ? "---|" : "---:|" }.joined())
    for row in rows.dropFirst() { print("| " + row.joined(separator: " | ") + " |") }
    print("")
    for f in figures where !f.note.isEmpty { print("- \(f.workload.trimmingCharacters(in: .whitespaces)): \(f.note)") }
}

func writeJSON(_ figures: [Figure], options: SuiteOptions, started: Date) throws {
    func value(_ x: Double?) -> Any { x.map { $0.isNaN ? NSNull() : $0 as Any } ?? NSNull() }
    let object: [String: Any] = [
        "date": ISO8601DateFormatter().string(from: started),
        "seconds": Date().timeIntervalSince(started),
        "cores": ProcessInfo.processInfo.activeProcessorCount,
        "options": ["events": options.events, "batch": options.batch, "queryEvents": options.queryEvents,
                    "queries": options.queries, "subjects": options.subjects, "groupCommitRounds": options.groupCommitRounds,
                    "growthHandles": options.growthHandles, "growthSubjects": options.growthSubjects],
        "figures": figures.map { f -> [String: Any] in
            ["workload": f.workload.trimmingCharacters(in: .whitespaces), "unit": f.unit, "ledger": value(f.ledger), "floor": value(f.floor), "rawLMDB": value(f.raw),
             "sqlite": value(f.sqlite), "baseline": value(f.baseline), "ratio": value(f.ratio), "ratioOf": f.ratioName ?? NSNull(),
             "target": f.target, "met": f.met.map { $0 as Any } ?? NSNull(), "note": f.note]
        },
    ]
    let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    try data.write(to: URL(fileURLWithPath: options.json))
    print("\nwritten to \(options.json)")
}
