import Foundation
@testable import PermissionLedger
import PermissionLedgerTesting
import Testing

/// The rows a verification rebuilds in memory, packed in one array: they must read back byte for byte, and
/// sort as LMDB orders keys, or every comparison with the kept tables would report damage.
@Suite struct RecordedRowsTests {
    @Test("rows read back as appended, and sort by key byte by byte, a key before the longer keys it starts")
    func rowsReadBackAndSortAsLMDBOrdersKeys() {
        var random = SeededRandom(seed: 7)
        var rows: [(key: [UInt8], value: [UInt8])] = [
            ([], [1]), ([0], []), ([0, 0], [2]), ([0xFF], [3]), ([0xFF, 0], []), ([1, 0xFF], Array(repeating: 9, count: 300)),
            (Array(repeating: 0xAB, count: 511), Array(repeating: 5, count: 70_000)),
        ]
        for _ in 0..<500 {
            let key = (0..<Int.random(in: 0...12, using: &random)).map { _ in UInt8.random(in: 0...3, using: &random) * 85 }
            rows.append((key, (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        rows.shuffle(using: &random)
        var recorded = RecordedRows()
        for row in rows { recorded.append(key: row.key, value: row.value) }
        #expect(recorded.count == rows.count)
        for (index, row) in rows.enumerated() {
            #expect(Array(recorded.row(index).key) == row.key && Array(recorded.row(index).value) == row.value)
        }

        recorded.sortByKey()
        let sortedKeys = rows.map(\.key).sorted { $0.lexicographicallyPrecedes($1) }
        #expect((0..<recorded.count).map { Array(recorded.row($0).key) } == sortedKeys)
        // Each row keeps its own value through the sort.
        for index in 0..<recorded.count {
            let (key, value) = recorded.row(index)
            #expect(rows.contains { $0.key == Array(key) && $0.value == Array(value) })
        }
    }
}
