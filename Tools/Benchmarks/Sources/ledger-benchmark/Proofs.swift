import Foundation
import PermissionLedger
import PermissionLedgerTesting

/// Checkpoint and proof latency (docs/spec/PROOFS.md): on the large ledger of the queries part
/// (`--query-events`, kept in `--dir`) against a ledger of 10,000 events, each op timed alone, in turns. Roots and
/// proofs come from the stored tree in a few dozen lookups: the large ledger's median may be at most twice the
/// small one's.
func measureProofs(_ options: SuiteOptions) throws -> [Figure] {
    let small = try proofLedger(options.directory + "/proofs-10000", events: 10_000, options: options)
    let large = try proofLedger(options.directory + "/query-\(options.queryEvents)", events: options.queryEvents, options: options)
    let ledgers = [small, large]
    let kinds = ["checkpoint of the head (root, consistency with the last signed, Ed25519)", "inclusion proof of a random event",
                 "consistency proof from a random size to the head"]
    var samples = [[[Double]]](repeating: [[], []], count: kinds.count)
    var rng = SeededRandom(seed: 31)
    let rounds = options.queries + options.queries / 10
    for round in 0..<rounds {
        for which in (round % 2 == 0 ? [0, 1] : [1, 0]) {
            let (ledger, signer, head) = ledgers[which]
            let seq = UInt64.random(in: 1...head, using: &rng)
            let old = UInt64.random(in: 1...head, using: &rng)
            let times = [
                try seconds { _ = try ledger.checkpoint(asOf: .seq(head), signer: signer) },
                try seconds { _ = try ledger.inclusionProof(seq: seq, size: head) },
                try seconds { _ = try ledger.consistencyProof(from: old, to: head) },
            ]
            if round >= options.queries / 10 { for kind in kinds.indices { samples[kind][which].append(times[kind]) } }
        }
    }
    return kinds.indices.map { kind in
        let (smallP50, smallP99) = percentiles(samples[kind][0])
        let (largeP50, largeP99) = percentiles(samples[kind][1])
        let ratio = largeP50 / smallP50
        return Figure(
            workload: "\(kinds[kind]): \(options.queryEvents) events against 10,000", unit: "µs (p50)", ledger: largeP50, baseline: smallP50,
            ratio: ratio, ratioName: "\(options.queryEvents) / 10,000 events", target: "≤ 2", met: ratio <= 2,
            note: String(format: "p99 %.0f µs against %.0f µs; %d of each, page cache warm", largeP99, smallP99, options.queries))
    }
}

/// The ledger at `folder/ledger` with `events` events (built in process when it is not there, the large one as the
/// queries part builds it), opened for writing once so that a ledger from an older build gets its tree, then open
/// read-only, with a signing key of its own in `folder`, and its head.
func proofLedger(_ folder: String, events: Int, options: SuiteOptions) throws -> (Ledger, CheckpointSigner, UInt64) {
    let path = folder + "/ledger"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try {
        let writable = try Ledger(path: path, options: .init(mapSize: 1 << 30, durable: false))
        let head = try writable.head().seq
        guard head != UInt64(events) else { return }
        precondition(head == 0, "\(path) holds \(head) events, not \(events): remove it")
        log("  building a ledger of \(events) events in process …")
        var generator = EventGenerator(seed: 7_000 + UInt64(events), subjects: options.subjects)
        try generator.generate(events, progress: "appended") { try writable.appendSynchronously($0) }
    }()
    warmPageCache(path + "/data.mdb")
    let keyFile = folder + "/signing.key"
    for file in [keyFile, keyFile + ".signed"] { try? FileManager.default.removeItem(atPath: file) }
    let signer = try CheckpointSigner.create(keyFile: keyFile, origin: "benchmark.example/\(events)")
    let ledger = try Ledger(path: path, options: .init(readOnly: true))
    return (ledger, signer, try ledger.head().seq)
}
