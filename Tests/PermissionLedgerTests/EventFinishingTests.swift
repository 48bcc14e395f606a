import Foundation
@testable import PermissionLedger
import Testing

/// The leaves hashed on a second thread (`EventFinishing`): every one, in seq order, as SHA-256 of RFC 9162's leaf.
@Suite struct EventFinishingTests {
    struct Broken: Error {}

    @Test(arguments: [1, EventFinishing.chunk - 1, EventFinishing.chunk, 5 * EventFinishing.chunk + 3])
    func everyLeafIsHashedInSeqOrder(count: Int) throws {
        let hashing = EventFinishing()
        for seq in UInt64(1)...UInt64(count) {
            hashing.add(seq: seq) { Array("leaf \(seq)".utf8) }
        }
        #expect(hashing.count == count)
        let hashes = try hashing.take()
        #expect(hashes.map(\.seq) == Array(UInt64(1)...UInt64(count)))
        #expect(hashes.map(\.hash) == (1...count).map { TreeHash.leaf(Array("leaf \($0)".utf8)) })
        #expect(hashing.count == 0)
        #expect(try hashing.take().isEmpty)
    }

    @Test func anEventWithoutALeafIsLeftOut() throws {
        let hashing = EventFinishing()
        for seq in UInt64(1)...200 {
            hashing.add(seq: seq) { seq % 3 == 0 ? nil : [UInt8(truncatingIfNeeded: seq)] }
        }
        #expect(try hashing.take().map(\.seq) == (1...200).filter { $0 % 3 != 0 })
    }

    /// A leaf that throws, on the hashing thread or on the caller's, makes `take` throw; the next batch starts clean.
    @Test(arguments: [10, 150])
    func aLeafThatThrowsIsReported(brokenSeq: UInt64) throws {
        let hashing = EventFinishing()
        for seq in UInt64(1)...UInt64(160) {
            hashing.add(seq: seq) {
                if seq == brokenSeq { throw Broken() }
                return [1]
            }
        }
        #expect(throws: Broken.self) { try hashing.take() }
        hashing.add(seq: 161) { [2] }
        #expect(try hashing.take().map(\.seq) == [161])
    }
}
