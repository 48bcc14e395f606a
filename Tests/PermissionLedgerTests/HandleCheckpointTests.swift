import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// A handle checkpoint is written from rows in handle order; its bytes must equal those of the encoding
/// that sorts the rows by key, which is what verification rebuilds and what older versions wrote.
@Suite struct HandleCheckpointTests {
    static func handles() throws -> [CommunicationHandle] {
        let customs = ["h1", "h10", "h2", "Zed", "\u{e9}-chat", "\u{1F600}", String(repeating: "b", count: 199),
                       String(repeating: "b", count: 200), String(repeating: "b", count: 201), String(repeating: "a", count: 250)]
        return try customs.map { try CommunicationHandle(value: $0, kind: .custom) } + [
            try CommunicationHandle(value: "a@example.com", kind: .emailAddress),
            try CommunicationHandle(value: String(repeating: "m", count: 230) + "@example.com", kind: .emailAddress),
            try CommunicationHandle(value: "+15550100001", kind: .phoneNumber),
            try CommunicationHandle(value: "5550100002", kind: .phoneNumber),
        ]
    }

    static func row(_ handle: CommunicationHandle, _ n: Int) -> HandleRow {
        HandleRow(handle: handle, known: n % 2 == 0, since: Timestamp(microseconds: Int64(n) * 1_000_000),
                  until: n % 3 == 0 ? Timestamp(microseconds: Int64(n) * 2_000_000) : nil, source: .observation(UInt64(n)))
    }

    @Test func rowsInHandleOrderEncodeAsRowsSortedByKey() throws {
        let all = try Self.handles()
        // Every subset whose members' index bits are set in `mask`, for a spread of masks.
        for mask in stride(from: 1, to: 1 << all.count, by: 37) {
            let chosen = all.indices.filter { mask & (1 << $0) != 0 }.map { Self.row(all[$0], $0) }
            let inHandleOrder = chosen.sorted { $0.handle < $1.handle }
            let byKey = HandleCheckpoint.encode(chosen.reversed().map { (ByteKey(Keys.handleOnly($0.handle)), $0) })
            let fast = HandleCheckpoint.encode(sortedRows: inHandleOrder)
            #expect(fast == byKey, "mask \(mask)")
            let decoded = try fast.withUnsafeBytes { try HandleCheckpoint.decodeRows($0) }
            #expect(Set(decoded) == Set(chosen))
        }
    }

    @Test func plainKeysOrderAsHandlesDo() throws {
        let plain = try Self.handles().filter { $0.value.utf8.count <= Keys.longestPlainHandle }
        for a in plain {
            for b in plain {
                #expect(Keys.handleOnly(a).lexicographicallyPrecedes(Keys.handleOnly(b)) == (a < b), "\(a) and \(b)")
            }
        }
    }
}
