import Foundation
@testable import PermissionLedger
import Testing

/// The ledger's one JSON writer, where it writes a value in a form of its own rather than through Foundation.
@Suite struct JSONWriterTests {
    @Test("a UUID is written as Foundation's uuidString writes it: uppercase, hyphens after 8, 12, 16 and 20 digits")
    func uuidsAsFoundationWritesThem() {
        var generator = SystemRandomNumberGenerator()
        let edges = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                     UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
                     UUID(uuidString: "6A3F1C2E-0009-4000-8000-000000000001")!]
        let random = (0..<2_000).map { _ in
            UUID(uuid: (UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator),
                        UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator)))
        }
        for id in edges + random {
            var writer = JSONWriter()
            writer.uuid(id)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"\(id.uuidString)\"")
        }
    }
}
