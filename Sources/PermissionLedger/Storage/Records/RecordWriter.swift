import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import PermissionModel

/// Appends the primitives of stored records: LEB128 varints, zigzag for signed, length-prefixed UTF-8.
struct RecordWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func unsigned(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func text(_ s: String) {
        var copy = s
        copy.withUTF8 { utf8 in
            unsigned(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optionalText(_ s: String?) {
        if let s { byte(1); text(s) } else { byte(0) }
    }

    mutating func optionalTime(_ t: Timestamp?) {
        if let t { byte(1); signed(t.microseconds) } else { byte(0) }
    }

    mutating func uuid(_ id: UUID) {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
    }

    mutating func handle(_ h: CommunicationHandle) {
        byte(Codes.kind(h.kind))
        text(h.value)
    }

    mutating func name(_ name: PersonNameComponents?) {
        guard let name else { byte(0); return }
        let parts = EventJSON.nameParts(name)
        var mask: UInt8 = 0x80
        for (bit, part) in parts.enumerated() where part.1 != nil { mask |= 1 << UInt8(bit) }
        byte(mask)
        for part in parts { if let value = part.1 { text(value) } }
    }
}
