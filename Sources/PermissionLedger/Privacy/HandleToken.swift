import Foundation

/// A handle's token (``DataKeys/token(_:tokenKey:)``) as a value of its own: 16 bytes in two words, hashed and
/// compared without an allocation. The tables hold a token as its text (base64url without padding, 22
/// characters); ``init(text:)`` reads it back.
struct HandleToken: Hashable {
    private let high: UInt64
    private let low: UInt64

    /// The token of `bytes`, which hold exactly ``DataKeys/tokenSize`` bytes.
    init(bytes: some Collection<UInt8>) {
        precondition(bytes.count == DataKeys.tokenSize, "a handle token is \(DataKeys.tokenSize) bytes")
        var words: (UInt64, UInt64) = (0, 0)
        for (index, byte) in bytes.enumerated() {
            if index < 8 { words.0 = words.0 << 8 | UInt64(byte) } else { words.1 = words.1 << 8 | UInt64(byte) }
        }
        (high, low) = words
    }

    /// The token whose text (``DataKeys/base64URL(_:)`` of its bytes) is `text`; `nil` when `text` is not one.
    init?(text: UnsafeRawBufferPointer) {
        guard text.count == Self.textSize else { return nil }
        // 22 characters of 6 bits: 132 bits, the 16 bytes and 4 zero bits of padding. Bits are gathered 6 at a
        // time and taken 8 at a time, into `high` for the first 8 bytes and `low` for the rest.
        var high: UInt64 = 0
        var low: UInt64 = 0
        var gathered: UInt32 = 0
        var bits = 0
        var bytes = 0
        for character in text {
            guard let sextet = Self.sextet(character) else { return nil }
            gathered = gathered << 6 | UInt32(sextet)
            bits += 6
            if bits >= 8 {
                bits -= 8
                let byte = UInt64(gathered >> UInt32(bits) & 0xFF)
                if bytes < 8 { high = high << 8 | byte } else { low = low << 8 | byte }
                bytes += 1
            }
        }
        guard gathered & (1 << UInt32(bits) - 1) == 0 else { return nil }
        (self.high, self.low) = (high, low)
    }

    /// The token whose text is `text`; `nil` when it is not one.
    init?(text: String) {
        var text = text
        guard let token = text.withUTF8({ Self(text: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = token
    }

    /// The length of a token's text.
    static let textSize = 22

    /// The token's 16 bytes.
    var bytes: [UInt8] {
        (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> UInt64(56 - 8 * (index % 8))) }
    }

    /// The value of a base64url character (RFC 4648, section 5).
    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
