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
        guard hex.utf8.count == 64, let bytes = hexBytes(hex) else { return nil }
        self.bytes = bytes
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

/// The bytes of an even number of lowercase hex digits, else `nil`.
func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ d: UInt8) -> UInt8? {
        switch d {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): d - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): d - UInt8(ascii: "a") + 10
        default: nil
        }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for i in stride(from: 0, to: digits.count, by: 2) {
        guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}
