import Foundation
import PermissionModel

/// A SHA-256 chain hash: SHA-256 over the previous event's hash followed by the event's stored bytes.
public struct ChainHash: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes.
    public let bytes: [UInt8]

    /// The hash before the first event: 32 zero bytes.
    public static let genesis = ChainHash(unchecked: [UInt8](repeating: 0, count: 32))

    /// A hash from its 32 bytes as stored, not checked: for storage engines that keep the bytes themselves.
    @_spi(StorageEngine) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Parses 64 lowercase hex digits.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            guard let hi = Self.nibble(utf8[2 * i]), let lo = Self.nibble(utf8[2 * i + 1]) else { return nil }
            out[i] = hi << 4 | lo
        }
        bytes = out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// 64 lowercase hex digits.
    public var description: String { hexString(bytes) }
}

func hexString(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
