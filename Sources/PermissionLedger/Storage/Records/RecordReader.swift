import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import PermissionModel

/// The text `bytes` hold, or `nil` when they are not valid UTF-8.
///
/// `String(validating:as:)` runs unspecialized on this toolchain, looking up generic metadata on every
/// call: the largest single cost of decoding a handle row. Decoding repairs invalid bytes instead, and its
/// result is always valid UTF-8, so it equals its input byte for byte exactly when the input was valid.
func validUTF8(_ bytes: UnsafeRawBufferPointer) -> String? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard text.utf8.count == bytes.count else { return nil }
    guard let start = bytes.baseAddress, !bytes.isEmpty else { return text }
    let same = text.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, start, bytes.count) == 0 }
    return same ?? text.utf8.elementsEqual(bytes) ? text : nil
}

/// Reads what ``RecordWriter`` wrote, checking every bound: damaged bytes throw, never trap.
struct RecordReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { index == bytes.count }
    var remaining: Int { bytes.count - index }

    mutating func byte() throws(EventRecord.DecodingError) -> UInt8 {
        guard index < bytes.count else { throw .init(reason: "record ends early") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func unsigned() throws(EventRecord.DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64, !(shift == 63 && b > 1) else { throw .init(reason: "number too large") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func signed() throws(EventRecord.DecodingError) -> Int64 {
        let u = try unsigned()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    mutating func count() throws(EventRecord.DecodingError) -> Int {
        let n = try unsigned()
        guard n <= UInt64(remaining) else { throw .init(reason: "count \(n) exceeds the record") }
        return Int(n)
    }

    mutating func raw(_ n: Int) throws(EventRecord.DecodingError) -> UnsafeRawBufferPointer {
        guard n <= remaining else { throw .init(reason: "record ends early") }
        defer { index += n }
        return UnsafeRawBufferPointer(rebasing: bytes[index..<index + n])
    }

    mutating func text() throws(EventRecord.DecodingError) -> String {
        guard let s = validUTF8(try raw(try count())) else { throw .init(reason: "text is not UTF-8") }
        return s
    }

    mutating func optionalText() throws(EventRecord.DecodingError) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try text()
        case let other: throw .init(reason: "bad presence flag \(other)")
        }
    }

    mutating func optionalTime() throws(EventRecord.DecodingError) -> Timestamp? {
        switch try byte() {
        case 0: return nil
        case 1: return Timestamp(microseconds: try signed())
        case let other: throw .init(reason: "bad presence flag \(other)")
        }
    }

    mutating func uuid() throws(EventRecord.DecodingError) -> UUID {
        let s = try raw(16)
        return UUID(uuid: (s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]))
    }

    mutating func handle() throws(EventRecord.DecodingError) -> CommunicationHandle {
        let kind = try Codes.kind(try byte())
        let value = try text()
        guard !value.isEmpty else { throw .init(reason: "an empty handle") }
        return CommunicationHandle(normalizedValue: value, kind: kind)
    }

    mutating func name() throws(EventRecord.DecodingError) -> PersonNameComponents? {
        let mask = try byte()
        if mask == 0 { return nil }
        guard mask & 0x80 != 0, mask & 0x40 == 0 else { throw .init(reason: "bad name mask") }
        var n = PersonNameComponents()
        if mask & 1 != 0 { n.namePrefix = try text() }
        if mask & 2 != 0 { n.givenName = try text() }
        if mask & 4 != 0 { n.middleName = try text() }
        if mask & 8 != 0 { n.familyName = try text() }
        if mask & 16 != 0 { n.nameSuffix = try text() }
        if mask & 32 != 0 { n.nickname = try text() }
        return n
    }
}
