import Foundation
@testable import PermissionLedger
import Testing

/// What is made of each event on a second thread (`EventFinishing`): every leaf, in seq order, as SHA-256 of
/// RFC 9162's leaf, and every `events` entry as made, beside it.
@Suite struct EventFinishingTests {
    struct Broken: Error {}

    @Test(arguments: [1, EventFinishing.chunk - 1, EventFinishing.chunk, 5 * EventFinishing.chunk + 3])
    func everyEventIsFinishedInSeqOrder(count: Int) throws {
        let finishing = EventFinishing()
        #expect(finishing.firstSeq == nil)
        for seq in UInt64(1)...UInt64(count) {
            finishing.add(seq: seq) { .init(leaf: Array("leaf \(seq)".utf8), entry: Array("entry \(seq)".utf8)) }
        }
        #expect(finishing.count == count)
        #expect(finishing.firstSeq == 1)
        let finished = try finishing.take()
        #expect(finished.map(\.seq) == Array(UInt64(1)...UInt64(count)))
        #expect(finished.map(\.leaf) == (1...count).map { TreeHash.leaf(Array("leaf \($0)".utf8)) })
        #expect(finished.map(\.entry) == (1...count).map { Array("entry \($0)".utf8) })
        #expect(finishing.count == 0)
        #expect(finishing.firstSeq == nil)
        #expect(try finishing.take().isEmpty)
    }

    @Test func anEventWithNeitherLeafNorEntryIsLeftOut() throws {
        let finishing = EventFinishing()
        for seq in UInt64(1)...200 {
            finishing.add(seq: seq) {
                switch seq % 3 {
                case 0: .init(leaf: nil, entry: nil)
                case 1: .init(leaf: nil, entry: [1])
                default: .init(leaf: [UInt8(truncatingIfNeeded: seq)], entry: nil)
                }
            }
        }
        let finished = try finishing.take()
        #expect(finished.map(\.seq) == (1...200).filter { $0 % 3 != 0 })
        #expect(finished.allSatisfy { ($0.seq % 3 == 1) == ($0.leaf == nil && $0.entry == [1]) })
    }

    /// Work that throws, on the second thread or on the caller's, makes `take` throw; the next batch starts clean.
    @Test(arguments: [10, 150])
    func workThatThrowsIsReported(brokenSeq: UInt64) throws {
        let finishing = EventFinishing()
        for seq in UInt64(1)...UInt64(160) {
            finishing.add(seq: seq) {
                if seq == brokenSeq { throw Broken() }
                return .init(leaf: [1], entry: nil)
            }
        }
        #expect(throws: Broken.self) { try finishing.take() }
        finishing.add(seq: 161) { .init(leaf: [2], entry: nil) }
        #expect(finishing.firstSeq == 161)
        #expect(try finishing.take().map(\.seq) == [161])
    }
}
