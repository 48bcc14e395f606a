@testable import PermissionLedger
import Testing

/// Stored text is decoded by `validUTF8`, a faster stand-in for `String(validating:as:)`: it must accept and
/// refuse exactly what the standard library does.
@Suite struct TextDecodingTests {
    static let cases: [(String, [UInt8])] = [
        ("empty", []),
        ("ASCII", Array("kid-ava".utf8)),
        ("two-byte", Array("caf\u{e9}".utf8)),
        ("four-byte", Array("\u{1F600}".utf8)),
        ("a NUL", [0x61, 0x00, 0x62]),
        ("the replacement character itself", [0xEF, 0xBF, 0xBD]),
        ("a lone continuation byte", [0x61, 0x80]),
        ("an overlong NUL", [0xC0, 0x80]),
        ("an encoded surrogate", [0xED, 0xA0, 0x80]),
        ("past U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        ("a cut sequence at the end", [0x61, 0xE2, 0x82]),
        ("a cut sequence before ASCII", [0xE2, 0x82, 0x41]),
        ("0xFF", [0xFF]),
        ("a cut sequence then a replacement character", [0xEF, 0xBF, 0xEF, 0xBF, 0xBD]),
    ]

    @Test(arguments: cases)
    func acceptsExactlyValidUTF8(name: String, bytes: [UInt8]) {
        let expected = String(validating: bytes, as: UTF8.self)
        #expect(bytes.withUnsafeBytes(validUTF8) == expected, "\(name)")
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var invalid = 0
        for _ in 0..<20_000 {
            // Mostly ASCII and well-formed two- and three-byte sequences, with a stray byte now and then.
            var bytes: [UInt8] = []
            for _ in 0..<Int(next() % 12) {
                switch next() % 10 {
                case 0: bytes.append(UInt8(truncatingIfNeeded: next()))
                case 1, 2: bytes += Array("\u{e9}".utf8)
                case 3: bytes += Array("\u{20AC}".utf8)
                default: bytes.append(UInt8(0x20 + next() % 0x5F))
                }
            }
            let expected = String(validating: bytes, as: UTF8.self)
            if expected == nil { invalid += 1 }
            #expect(bytes.withUnsafeBytes(validUTF8) == expected, "\(bytes)")
        }
        #expect(invalid > 1_000, "the random inputs include invalid ones")
    }
}
