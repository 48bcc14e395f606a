import Foundation
@_spi(StorageEngine) import PermissionLedger
import PermissionModel

/// `ledger-benchmark append`: batched durable append and in-memory replay of the ledger alone; with
/// `--rules-only`, the same batches through the rules alone in memory (`InMemoryRules`, a diagnosis).
func runAppendBenchmark(_ arguments: [String]) throws {
    var eventCount = 1_000_000
    var batchSize = 10_000
    var directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-benchmark-\(getpid())").path
    var keepLedger = false
    var durable = true
    var replay = true
    var rulesOnly = false
    var format = Ledger.formatVersion
    var arguments = arguments.makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--events": eventCount = Int(arguments.next() ?? "") ?? eventCount
        case "--batch": batchSize = Int(arguments.next() ?? "") ?? batchSize
        case "--dir": directory = arguments.next() ?? directory
        case "--keep": keepLedger = true
        case "--no-sync": durable = false
        case "--no-replay": replay = false
        case "--rules-only": rulesOnly = true
        case "--format": format = UInt8(arguments.next() ?? "") ?? format
        default:
            print("usage: ledger-benchmark append [--events N] [--batch N] [--dir PATH] [--keep] [--no-sync] [--no-replay] [--rules-only] [--format 2|3]")
            exit(2)
        }
    }

    if rulesOnly {
        print("generating \(eventCount) events …")
        let events = generateEvents(eventCount)
        var rules = InMemoryRules()
        var appended = 0
        let elapsed = try seconds { appended = try inBatches(events, of: batchSize) { try rules.apply($0) } }
        print(String(format: "the rules alone in memory: %d events in batches of %d: %.2f s, %.0f events/s",
                     appended, batchSize, elapsed, Double(appended) / elapsed))
        return
    }

    let reuse = keepLedger && FileManager.default.fileExists(atPath: directory + "/data.mdb")
    if !reuse { try? FileManager.default.removeItem(atPath: directory) }
    defer { if !keepLedger { try? FileManager.default.removeItem(atPath: directory) } }

    print(reuse ? "reusing the ledger in \(directory)" : "generating \(eventCount) events …")
    let events = reuse ? [] : generateEvents(eventCount)
    var options = Ledger.Options(mapSize: 1 << 30, durable: durable)
    // A new ledger in an earlier storage format, to compare the formats this build writes.
    options.newLedgerFormat = format
    let ledger = try Ledger(path: directory, options: options)
    var appended = 0
    let appendSeconds = try seconds { appended = try inBatches(events, of: batchSize) { try ledger.appendSynchronously($0).appended } }
    let appendRate = Double(appended) / appendSeconds
    if !reuse { print(String(format: "append: %d events in batches of %d, %@: %.2f s, %.0f events/s (target 200,000)",
                 appended, batchSize, durable ? "durable commits" : "NO sync", appendSeconds, appendRate)) }

    guard replay else { return }
    var summary: ReplaySummary?
    let replaySeconds = try seconds { summary = try ledger.replayInMemory() }
    let replayRate = Double(summary!.events) / replaySeconds
    print(String(format: "replay into memory: %d events, %d questions: %.2f s, %.0f events/s (target 1,000,000)",
                 summary!.events, summary!.questions, replaySeconds, replayRate))
    let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int) ?? 0
    print(String(format: "data file: %.1f MiB, %.0f bytes/event", Double(size) / 1_048_576, Double(size) / Double(summary!.events)))
    let ledgerHead = try ledger.head().hash
    precondition(summary!.head == ledgerHead, "replay gave a different head hash than the ledger")
}

/// Offers `events` to `append` in batches of at most `size`, in order; the total `append` returned (how many
/// it appended).
func inBatches(_ events: [PermissionEvent], of size: Int, _ append: ([PermissionEvent]) throws -> Int) rethrows -> Int {
    try stride(from: 0, to: events.count, by: size).reduce(0) { total, start in
        total + (try append(Array(events[start..<min(start + size, events.count)])))
    }
}

/// The order in which `count` contenders go in `round`: each goes first in turn, so that none always finds
/// the disk busy or the caches warm.
func turns(_ count: Int, round: Int) -> [Int] {
    (0..<count).map { ($0 + round) % count }
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return now() - start
}

/// The bytes this process has passed to `write`-like system calls so far (`wchar` of `/proc/self/io`): with
/// LMDB, every dirty page a commit writes; with SQLite, its WAL and checkpoints. `nil` where there is no such file.
func bytesWrittenByProcess() -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") }) else { return nil }
    return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
}
