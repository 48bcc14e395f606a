import Foundation
@_spi(StorageEngine) import PermissionLedger

/// `ledger-benchmark rebuild LEDGER [--rounds N]`: `Ledger.rebuildProjections(path:)` with the log read ahead
/// on a second thread and on the rebuilding thread, taking turns round after round, so that a difference
/// between the two is told from the host's noise (a diagnosis; the suite times both once each way).
func runRebuildDiagnosis(_ arguments: [String]) throws {
    var rounds = 5
    var path: String?
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--rounds": rounds = max(1, Int(iterator.next() ?? "") ?? rounds)
        case let argument where !argument.hasPrefix("-") && path == nil: path = argument
        default:
            print("usage: ledger-benchmark rebuild LEDGER [--rounds N]   (LEDGER: a ledger directory, e.g. one kept by `append --keep`)")
            exit(2)
        }
    }
    guard let path, let head = try? Ledger(path: path, options: .init(readOnly: true)).head(), head.seq > 0 else {
        print("ledger-benchmark rebuild: give the directory of a ledger that holds events")
        exit(2)
    }
    var rates: [Bool: [Double]] = [true: [], false: []]
    for round in 0..<rounds {
        for readingAhead in turns(2, round: round).map({ $0 == 0 }) {
            var rebuilt: LogHead?
            let elapsed = try seconds { rebuilt = try Ledger.rebuildProjections(path: path, readingAhead: readingAhead) }
            precondition(rebuilt == head, "the rebuild changed the head")
            rates[readingAhead]!.append(Double(head.seq) / elapsed)
            print(String(format: "round %d, %@: %.0f events/s", round + 1, readingAhead ? "read ahead" : "one thread", Double(head.seq) / elapsed))
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(String(format: "median of %d rounds: read ahead %.0f, one thread %.0f events/s (read ahead / one thread %.2f×)",
                 rounds, median(rates[true]!), median(rates[false]!), median(rates[true]!) / median(rates[false]!)))
}
