import Foundation
import PermissionModel

/// Appends canonical JSON text. Output is always valid UTF-8, one line, with the escapes ``string(_:)`` lists.
struct JSONWriter {
    var bytes: [UInt8] = []
    /// Whether DEL, the C1 controls, U+2028 and U+2029 are escaped (see ``string(_:)``). The digest's canonical
    /// document keeps them as they are, so that a ledger's digest is the same whichever version computes it.
    let escapesLineBreakers: Bool

    init(capacity: Int = 256, escapingLineBreakers: Bool = true) {
        bytes.reserveCapacity(capacity)
        escapesLineBreakers = escapingLineBreakers
    }

    mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Writes `text` as a JSON string. Besides quotes, backslashes and C0 controls (which JSON requires),
    /// DEL, the C1 controls (U+0080–U+009F, U+0085 among them), U+2028 and U+2029 are escaped as `\uXXXX`:
    /// readers that split lines on them (Python's `str.splitlines()`, JavaScript before ES2019) still see one
    /// event or record a line (docs/spec/CLI.md, "Common"). The value read back is the same.
    mutating func string(_ text: String) {
        bytes.append(0x22)
        var text = text
        text.withUTF8 { utf8 in
            // Most strings need no escape: one copy of the whole buffer.
            let lineBreakers = escapesLineBreakers
            if !utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || (lineBreakers && ($0 == 0x7F || $0 == 0xC2 || $0 == 0xE2)) }) {
                bytes.append(contentsOf: utf8)
            } else {
                escaping(utf8)
            }
        }
        bytes.append(0x22)
    }

    /// The bytes of a string that holds a character to escape, escaped as ``string(_:)`` says.
    private mutating func escaping(_ utf8: UnsafeBufferPointer<UInt8>) {
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            i += 1
            switch byte {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20: unicodeEscape(UInt16(byte))
            case 0x7F where escapesLineBreakers: unicodeEscape(UInt16(byte))
            // U+0080–U+009F: C2 80 to C2 9F.
            case 0xC2 where escapesLineBreakers && i < utf8.count && utf8[i] < 0xA0:
                unicodeEscape(UInt16(utf8[i]))
                i += 1
            // U+2028 and U+2029: E2 80 A8 and E2 80 A9.
            case 0xE2 where escapesLineBreakers && i + 1 < utf8.count && utf8[i] == 0x80 && (utf8[i + 1] == 0xA8 || utf8[i + 1] == 0xA9):
                unicodeEscape(0x2028 + UInt16(utf8[i + 1] - 0xA8))
                i += 2
            default: bytes.append(byte)
            }
        }
    }

    /// Writes `time` as a JSON string in its canonical RFC 3339 form (``Timestamp/description``).
    mutating func time(_ time: Timestamp) {
        bytes.append(0x22)
        time.appendRFC3339(to: &bytes)
        bytes.append(0x22)
    }

    /// Writes `id` as a JSON string in the form of `UUID.uuidString`: 36 characters, uppercase hex digits in groups
    /// of 8, 4, 4, 4 and 12 joined by hyphens. Foundation formats `uuidString` with `sprintf` on Linux, which was a
    /// twentieth of the work of a Merkle leaf.
    mutating func uuid(_ id: UUID) {
        let hex: StaticString = "0123456789ABCDEF"
        let digits = hex.utf8Start
        bytes.append(0x22)
        withUnsafeBytes(of: id.uuid) { octets in
            for (index, octet) in octets.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(0x2D) }
                bytes.append(digits[Int(octet >> 4)])
                bytes.append(digits[Int(octet & 15)])
            }
        }
        bytes.append(0x22)
    }

    /// `\u` and four lowercase hex digits.
    private mutating func unicodeEscape(_ value: UInt16) {
        let hex: StaticString = "0123456789abcdef"
        let digits = hex.utf8Start
        bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), digits[Int(value >> 12)], digits[Int((value >> 8) & 15)],
                                  digits[Int((value >> 4) & 15)], digits[Int(value & 15)]])
    }

    mutating func optionalString(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    /// Writes `value` in decimal (every integer the ledger writes fits in 64 bits).
    mutating func integer<I: BinaryInteger>(_ value: I) {
        if value < 0 { bytes.append(0x2D) }
        var rest = UInt64(value.magnitude)
        var count = 1
        var scan = rest
        while scan >= 10 { scan /= 10; count += 1 }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0x30, count: count))
        var index = start + count - 1
        repeat {
            bytes[index] = 0x30 + UInt8(rest % 10)
            rest /= 10
            index -= 1
        } while rest > 0
    }

    mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    /// Writes `"key":` preceded by a comma unless `first`.
    mutating func key(_ name: StaticString, first: Bool = false) {
        if !first { bytes.append(0x2C) }
        bytes.append(0x22)
        raw(name)
        bytes.append(0x22)
        bytes.append(0x3A)
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Hands the bytes written so far to `emit` and starts again, once there are at least `threshold` of them:
    /// a long result goes out in chunks as it is written instead of as one string.
    mutating func drain<E: Error>(ifOver threshold: Int = 1 << 16, into emit: ([UInt8]) throws(E) -> Void) throws(E) {
        guard !bytes.isEmpty, bytes.count >= threshold else { return }
        try emit(bytes)
        bytes.removeAll(keepingCapacity: true)
    }
}
