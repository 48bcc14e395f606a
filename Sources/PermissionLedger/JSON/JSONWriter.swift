import PermissionModel

/// Appends canonical JSON text. Output is always valid UTF-8 with the minimal escapes.
struct JSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func string(_ text: String) {
        bytes.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }

    mutating func optionalString(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    mutating func integer<I: BinaryInteger>(_ value: I) { raw(String(value)) }

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
}
