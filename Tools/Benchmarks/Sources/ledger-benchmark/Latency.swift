import Foundation
import PermissionLedger
import PermissionModel
import PermissionLedgerTesting

/// p50 and p99 of a list of durations, in microseconds.
func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
    let sorted = samples.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    return (at(0.50) * 1e6, at(0.99) * 1e6)
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// A ledger built for querying, with a sample of its questions.
struct QueryLedger {
    let ledger: Ledger
    let path: String
    let sample: [(id: UUID, seq: UInt64)]
    let head: UInt64
    let subjects: Int
}

/// Builds (or reuses, when it holds the expected number of events) a ledger of `count` generated events.
func buildLedger(at path: String, events count: Int, subjects: Int) throws -> QueryLedger {
    var generator = EventGenerator(seed: 7_000 + UInt64(count), subjects: subjects)
    let reuse = FileManager.default.fileExists(atPath: path + "/data.mdb")
    if !reuse { try? FileManager.default.removeItem(atPath: path) }
    // Building is not what is measured: no fsync per batch.
    let ledger = try Ledger(path: path, options: .init(mapSize: 1 << 30, durable: false))
    let existing = try ledger.head().seq
    if existing != 0 && existing != UInt64(count) {
        throw LedgerError(.storage, "\(path) holds \(existing) events, not \(count): remove it")
    }
    let start = now()
    var remaining = count
    while remaining > 0 {
        let batch = generator.next(min(50_000, remaining))
        if existing == 0 { try ledger.appendSynchronously(batch) }
        remaining -= batch.count
        if existing == 0, count >= 1_000_000, (count - remaining) % 1_000_000 == 0 {
            FileHandle.standardError.write(Data("  built \(count - remaining) events, \(Int(now() - start)) s\n".utf8))
        }
    }
    return QueryLedger(ledger: ledger, path: path, sample: generator.askedSample, head: UInt64(count), subjects: subjects)
}

struct LatencyFigures {
    var question: (p50: Double, p99: Double)
    var knownHandles: (p50: Double, p99: Double)
}

/// In-process latency of `question` and `known-handles` as of random points (each query its own read
/// transaction), on several ledgers with their queries interleaved, so that the machine's load varies alike for all.
func measureInProcess(_ ledgers: [QueryLedger], samples: Int, rng: inout SeededRandom) throws -> [LatencyFigures] {
    var questionTimes = [[Double]](repeating: [], count: ledgers.count)
    var handleTimes = [[Double]](repeating: [], count: ledgers.count)
    for _ in 0..<samples {
        for (k, q) in ledgers.enumerated() {
            let (id, askedSeq) = q.sample[Int.random(in: 0..<q.sample.count, using: &rng)]
            let point = UInt64.random(in: askedSeq...q.head, using: &rng)
            var start = now()
            let status = try q.ledger.read(asOf: .seq(point)) { try $0.question(id) }
            questionTimes[k].append(now() - start)
            precondition(status != nil, "question \(id) missing as of seq \(point)")
            let subject = "kid-\(Int.random(in: 0..<q.subjects, using: &rng))"
            let handlePoint = UInt64.random(in: 1...q.head, using: &rng)
            start = now()
            _ = try q.ledger.read(asOf: .seq(handlePoint)) { try $0.knownHandles(subject: subject) }
            handleTimes[k].append(now() - start)
        }
    }
    return ledgers.indices.map { LatencyFigures(question: percentiles(questionTimes[$0]), knownHandles: percentiles(handleTimes[$0])) }
}

/// The same queries as whole processes of the tool.
func measureProcesses(_ q: QueryLedger, tool: String, samples: Int, rng: inout SeededRandom) throws -> LatencyFigures {
    func run(_ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let start = now()
        try process.run()
        process.waitUntilExit()
        let elapsed = now() - start
        precondition(process.terminationStatus == 0, "\(tool) \(arguments) exited \(process.terminationStatus)")
        return elapsed
    }
    var questionTimes: [Double] = []
    var handleTimes: [Double] = []
    for _ in 0..<samples {
        let (id, askedSeq) = q.sample[Int.random(in: 0..<q.sample.count, using: &rng)]
        let point = UInt64.random(in: askedSeq...q.head, using: &rng)
        questionTimes.append(try run(["question", id.uuidString, "--ledger", q.path, "--as-of", "seq:\(point)", "--format", "json"]))
        let subject = "kid-\(Int.random(in: 0..<q.subjects, using: &rng))"
        handleTimes.append(try run(["known-handles", "--subject", subject, "--ledger", q.path,
                                    "--as-of", "seq:\(UInt64.random(in: 1...q.head, using: &rng))", "--format", "json"]))
    }
    return LatencyFigures(question: percentiles(questionTimes), knownHandles: percentiles(handleTimes))
}

/// `ledger-benchmark latency [--large N] [--dir DIR] [--samples N]`
func runLatencyBenchmark(_ arguments: [String]) throws {
    var large = 10_000_000
    var small = 10_000
    var samples = 20_000
    var processSamples = 100
    var directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-latency").path
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--large": large = Int(iterator.next() ?? "") ?? large
        case "--small": small = Int(iterator.next() ?? "") ?? small
        case "--samples": samples = Int(iterator.next() ?? "") ?? samples
        case "--process-samples": processSamples = Int(iterator.next() ?? "") ?? processSamples
        case "--dir": directory = iterator.next() ?? directory
        default:
            print("usage: ledger-benchmark latency [--small N] [--large N] [--samples N] [--process-samples N] [--dir DIR]")
            exit(2)
        }
    }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    print("building ledgers of \(small) and \(large) events in \(directory) (kept for later runs) …")
    let smallLedger = try buildLedger(at: directory + "/small-\(small)", events: small, subjects: 100)
    let largeLedger = try buildLedger(at: directory + "/large-\(large)", events: large, subjects: 100)
    var rng = SeededRandom(seed: 99)
    // Warm both: the first queries fault pages in.
    _ = try measureInProcess([smallLedger, largeLedger], samples: 2_000, rng: &rng)
    let figures = try measureInProcess([smallLedger, largeLedger], samples: samples, rng: &rng)
    let (s, l) = (figures[0], figures[1])
    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
    func row(_ name: String, _ a: (p50: Double, p99: Double), _ b: (p50: Double, p99: Double)) {
        print(pad(name, 30) + String(format: "%10.1f %10.1f %10.1f %10.1f %7.2f %7.2f", a.p50, a.p99, b.p50, b.p99, b.p50 / a.p50, b.p99 / a.p99))
    }
    print(pad("µs, as of random points", 30) + " small p50        p99  large p50        p99  p50 ×   p99 ×")
    row("question, in process", s.question, l.question)
    row("known-handles, in process", s.knownHandles, l.knownHandles)
    let tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("permission-ledger").path
    if FileManager.default.isExecutableFile(atPath: tool), processSamples > 0 {
        let ps = try measureProcesses(smallLedger, tool: tool, samples: processSamples, rng: &rng)
        let pl = try measureProcesses(largeLedger, tool: tool, samples: processSamples, rng: &rng)
        row("question, whole process", ps.question, pl.question)
        row("known-handles, whole process", ps.knownHandles, pl.knownHandles)
    } else {
        print("(\(tool) not built: swift build -c release --product permission-ledger, for the whole-process figures)")
    }
    print("target: large/small ratio at most 2 (in process)")
}
