import Foundation

/// The rows of one table as LMDB would hold them, packed one after another in a single byte array.
///
/// A verification holds every row a rebuild of the derived tables implies at once; an array of two arrays
/// for each row would cost several times the rows' own bytes (two allocations, their headers and padding),
/// while here a row costs its bytes, six bytes of lengths and its place in ``starts``.
struct RecordedRows {
    /// Each row as its key's length (2 bytes, little-endian: keys are at most 511 bytes), its value's length
    /// (4 bytes), the key, then the value.
    private var bytes: [UInt8] = []
    /// Where each row starts in ``bytes``, in the order rows were appended, or by key once sorted.
    private var starts: [Int] = []

    var count: Int { starts.count }

    mutating func append(key: some Collection<UInt8>, value: some Collection<UInt8>) {
        precondition(key.count <= Int(UInt16.max) && value.count <= Int(UInt32.max), "a row longer than LMDB holds")
        starts.append(bytes.count)
        withUnsafeBytes(of: UInt16(key.count).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(value.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: value)
    }

    /// The key and value of the row at `index` (in the order of appends, or by key once sorted).
    func row(_ index: Int) -> (key: ArraySlice<UInt8>, value: ArraySlice<UInt8>) {
        let start = starts[index]
        let keyCount = Int(bytes[start]) | Int(bytes[start + 1]) << 8
        let valueCount = (0..<4).reduce(0) { $0 | Int(bytes[start + 2 + $1]) << (8 * $1) }
        let keyStart = start + 6
        return (bytes[keyStart..<(keyStart + keyCount)], bytes[(keyStart + keyCount)..<(keyStart + keyCount + valueCount)])
    }

    /// Orders the rows by key, byte by byte, as LMDB orders them.
    mutating func sortByKey() {
        let bytes = bytes
        bytes.withUnsafeBytes { buffer in
            func key(_ start: Int) -> UnsafeRawBufferPointer {
                let count = Int(buffer[start]) | Int(buffer[start + 1]) << 8
                return UnsafeRawBufferPointer(rebasing: buffer[(start + 6)..<(start + 6 + count)])
            }
            starts.sort { a, b in
                let left = key(a), right = key(b)
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order != 0 ? order < 0 : left.count < right.count
            }
        }
    }
}
