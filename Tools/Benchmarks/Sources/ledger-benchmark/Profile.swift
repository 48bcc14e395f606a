import Foundation
import PermissionLedger
import PermissionModel
import PermissionLedgerTesting

/// One query kind of the suite, on the ledger alone, run for long enough to profile (`perf record -g`): the same
/// seeded queries as the suite's, on the suite's query ledger (`suite --only queries` builds it first).
///
///     ledger-benchmark profile --dir DIR --query-events N --kind question [--queries N] [--subjects N] [--reopen-every N]
///
/// With `--reopen-every N`, the ledger is closed and opened again after every N queries, so that what a first
/// query of a subject costs (its keys read and unwrapped) stays in the profile as it is in a short run.
func runQueryProfile(_ arguments: [String]) async throws {
    var directory = ""
    var count = 10_000_000
    var kind = "question"
    var queries = 100_000
    var subjects = 1_000
    var reopenEvery = Int.max
    var iterator = arguments.makeIterator()
    let usage = "usage: ledger-benchmark profile --dir DIR [--query-events N] [--kind question|known-handles|is-known-handle|permissions] [--queries N] [--subjects N] [--reopen-every N]"
    while let argument = iterator.next() {
        switch argument {
        case "--dir": directory = iterator.next() ?? directory
        case "--query-events": count = Int(iterator.next() ?? "") ?? count
        case "--kind": kind = iterator.next() ?? kind
        case "--queries": queries = Int(iterator.next() ?? "") ?? queries
        case "--subjects": subjects = Int(iterator.next() ?? "") ?? subjects
        case "--reopen-every": reopenEvery = Int(iterator.next() ?? "") ?? reopenEvery
        default: print(usage); exit(2)
        }
    }
    let ledgerPath = directory + "/query-\(count)/ledger"
    guard !directory.isEmpty, FileManager.default.fileExists(atPath: ledgerPath) else {
        print("no query ledger at \(ledgerPath): run `ledger-benchmark suite --only queries --dir DIR --query-events \(count)` first")
        exit(2)
    }
    var generator = EventGenerator(seed: 7_000 + UInt64(count), subjects: subjects)
    generator.generate(count) { _ in }
    let sample = generator.askedSample
    var ledger = try Ledger(path: ledgerPath, options: .init(readOnly: true))
    warmPageCache(ledgerPath + "/data.mdb")
    let handles = EventGenerator(seed: 1, subjects: subjects)
    let head = try ledger.head().seq
    var rng = SeededRandom(seed: 99)
    var answered = 0
    let start = now()
    for round in 0..<queries {
        if round > 0, round % reopenEvery == 0 {
            await ledger.close()
            ledger = try Ledger(path: ledgerPath, options: .init(readOnly: true))
        }
        let (id, askedSeq) = sample[Int.random(in: 0..<sample.count, using: &rng)]
        let kid = Int.random(in: 0..<subjects, using: &rng)
        let subject = "kid-\(kid)"
        let handle = handles.handle(kid * 40 + Int.random(in: 0..<40, using: &rng))
        let point = UInt64.random(in: 1...head, using: &rng)
        switch kind {
        case "question":
            let status = try ledger.read(asOf: .seq(UInt64.random(in: askedSeq...head, using: &rng))) { try $0.question(id) }
            if status != nil { answered += 1 }
        case "known-handles":
            answered += try ledger.read(asOf: .seq(point)) { try $0.knownHandles(subject: subject) }.count
        case "is-known-handle":
            if try ledger.read(asOf: .seq(point), { try $0.isKnownHandle(handle, subject: subject) }) { answered += 1 }
        case "permissions":
            answered += try ledger.read(asOf: .seq(point)) { try $0.permissions(subject: subject) }.count
        default: print(usage); exit(2)
        }
    }
    let seconds = now() - start
    print(String(format: "%@: %d queries in %.2f s, %.1f µs each (%d answered)", kind, queries, seconds, seconds / Double(queries) * 1e6, answered))
}
