import Foundation
import LMDB

/// `ledger-benchmark pages LEDGER [--batch N]`: which tables a durable commit of `N` events rewrites, and how
/// much of each.
///
/// A commit writes every leaf page it changed, whole, then flushes them. This reads a ledger's tables
/// (`docs/STORAGE.md`), finds for each entry the seq of the event that wrote it, and counts the leaf pages that
/// the entries of each window of `N` seqs fall on: the pages a commit of those `N` events dirtied, estimated on
/// the tree as it is now (earlier commits wrote to smaller trees). Reported for the last five full windows.
func runPagesDiagnosis(_ arguments: [String]) throws {
    let path = arguments.enumerated().first { index, argument in
        !argument.hasPrefix("-") && (index == 0 || arguments[index - 1] != "--batch")
    }?.element
    guard let path else {
        print("usage: ledger-benchmark pages LEDGER [--batch N]   (LEDGER: a ledger directory, e.g. one kept by `append --keep`)")
        exit(2)
    }
    var batch = 10_000
    if let flag = arguments.firstIndex(of: "--batch") {
        guard flag + 1 < arguments.count, let value = Int(arguments[flag + 1]), value > 0 else {
            print("--batch takes a positive number of events")
            exit(2)
        }
        batch = value
    }
    do {
        try printPagesPerCommit(ledger: path, batch: batch)
    } catch {
        print("ledger-benchmark pages: \(path): cannot read the ledger's tables (\(error))")
        exit(1)
    }
}

private func printPagesPerCommit(ledger path: String, batch: Int) throws {
    let environment = try Environment(path: path, options: .init(mapSize: 1 << 40, maxDatabases: 32, readOnly: true))
    var rows: [(table: String, entries: Int, leaves: Int, perCommit: Double)] = []
    var pageSize = 0
    for table in ["events", "eventIDs", "byRecordedAt", "subjects", "questionsByAsked", "questions", "handles", "permissions",
                  "subjectEvents", "handleSubjects"] {
        let db = try environment.openDatabase(table, create: false)
        try environment.read { txn in
            let statistics = try txn.statistics(db)
            pageSize = statistics.pageSize
            guard statistics.entries > 0 else { return }
            let perLeaf = Double(statistics.entries) / Double(statistics.leafPages)
            var leavesByWindow: [Int: Set<Int>] = [:]
            let cursor = try txn.cursor(db)
            var rank = 0
            var entry = try cursor.first()
            while let (key, value) = entry {
                let seq = writingSeq(table: table, key: key, value: value)
                leavesByWindow[Int(seq) / batch, default: []].insert(Int(Double(rank) / perLeaf))
                rank += 1
                entry = try cursor.next()
            }
            // The last window is usually partial, and the first ones wrote to a smaller tree.
            let windows = leavesByWindow.keys.sorted().dropLast().suffix(5)
            let perCommit = windows.isEmpty ? 0 : Double(windows.map { leavesByWindow[$0]!.count }.reduce(0, +)) / Double(windows.count)
            rows.append((table, statistics.entries, statistics.leafPages, perCommit))
        }
    }
    let total = rows.map(\.perCommit).reduce(0, +)
    print("| Table | Entries | Leaf pages | Leaf pages a commit of \(batch) events rewrites | Share |")
    print("|---|---:|---:|---:|---:|")
    for row in rows.sorted(by: { $0.perCommit > $1.perCommit }) {
        print("| \(row.table) | \(row.entries) | \(row.leaves) | \(Int(row.perCommit.rounded())) | \(String(format: "%.0f%%", 100 * row.perCommit / total)) |")
    }
    print("| all | | | \(Int(total.rounded())) (\(Int((total * Double(pageSize) / Double(batch)).rounded())) bytes per event, pages of \(pageSize) bytes) | |")
}

/// The seq of the event that wrote a table entry: in the key of log-ordered and versioned tables, in the value of
/// the indexes that point at an event.
private func writingSeq(table: String, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> UInt64 {
    func bigEndian(_ bytes: UnsafeRawBufferPointer.SubSequence) -> UInt64 { bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }
    switch table {
    case "events": return bigEndian(key[...])
    case "eventIDs", "questionsByAsked", "handleSubjects", "subjects": return bigEndian(value[...])
    default: return bigEndian(key[(key.count - 8)...])
    }
}
