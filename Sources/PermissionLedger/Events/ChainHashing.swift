internal import Crypto
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The chain hash after an event: SHA-256 over the previous hash followed by the event's stored bytes.
@_spi(StorageEngine) public func chainHash(previous: ChainHash, record: [UInt8]) -> ChainHash {
    record.withUnsafeBytes { chainHash(previous: previous, record: $0) }
}

/// ``chainHash(previous:record:)`` of bytes in place: the chained part of a stored record.
func chainHash(previous: ChainHash, record: UnsafeRawBufferPointer) -> ChainHash {
    var hasher = SHA256()
    hasher.update(data: previous.bytes)
    hasher.update(bufferPointer: record)
    return ChainHash(unchecked: hasher.finalize().withUnsafeBytes { [UInt8](copying: $0) })
}

extension [UInt8] {
    /// A copy of `bytes` made with one `memcpy`: `Array(_:)` of a digest or of a slice of a buffer copies
    /// a byte at a time through an iterator, and `init(unsafeUninitializedCapacity:)` looks up the array's
    /// generic metadata on every call on this toolchain.
    init(copying bytes: UnsafeRawBufferPointer) {
        self.init()
        reserveCapacity(bytes.count)
        append(contentsOf: bytes)
    }

    /// Whether these bytes equal `other`'s, by one `memcmp`.
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && withUnsafeBytes { mine in
            mine.isEmpty || memcmp(mine.baseAddress!, other.baseAddress!, mine.count) == 0
        }
    }
}
