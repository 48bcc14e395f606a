import Foundation
import PermissionLedger

/// Splits what a file descriptor gives into lines, reading a chunk at a time: it keeps one chunk and at
/// most one line (of at most ``EventJSON/maxLineBytes`` and a `\r`).
///
/// A line longer than that is given as ``Line/tooLong`` as soon as its bytes pass the limit, and the reader
/// then stops: the next line begins only where this one ends, which could be never (`/dev/zero`), so the rest
/// of the input is not read. A UTF-8 byte order mark at the start of the input is skipped (RFC 8259, 8.1).
final class LineReader {
    /// One line, without its `\n`.
    enum Line {
        /// The line's bytes, valid only during the call they are given to.
        case text(UnsafeBufferPointer<UInt8>)
        /// A line too long to be an event: its bytes were not kept, and nothing after them is read.
        case tooLong
    }

    /// The name problems are reported with: the path as given, or `<stdin>`.
    let name: String
    /// The number of the last line given (1 for the first).
    private(set) var lineNumber = 0
    let isDirectory: Bool

    private var descriptor: Int32
    private let owned: Bool
    private let chunk: UnsafeMutableBufferPointer<UInt8>
    /// The bytes of `chunk` not yet given, `start..<end`.
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Whether a line too long was given: nothing more is read.
    private var stopped = false
    /// The start of a line that began in an earlier chunk.
    private var carry: [UInt8] = []
    /// The most bytes a line may have: the longest line allowed and a `\r`.
    private let keep = EventJSON.maxLineBytes + 1

    init(name: String, descriptor: Int32, owned: Bool, chunkSize: Int) {
        self.name = name
        self.descriptor = descriptor
        self.owned = owned
        chunk = .allocate(capacity: max(1, chunkSize))
        var info = stat()
        isDirectory = fstat(descriptor, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    deinit {
        close()
        chunk.deallocate()
    }

    /// Closes the file (not standard input).
    func close() {
        if owned, descriptor >= 0 { _ = Foundation.close(descriptor) }
        descriptor = -1
    }

    /// Calls `body` with the next line and returns what it returns, or returns `nil` at the end of the file
    /// (and after a line too long).
    ///
    /// - Throws: ``ToolFailure`` (exit 1) when the file cannot be read.
    func nextLine<R>(_ body: (Line) throws -> R) throws -> R? {
        while !stopped {
            if start < end {
                let rest = UnsafeBufferPointer(rebasing: chunk[start..<end])
                let newline = rest.firstIndex(of: 0x0A)
                let piece = UnsafeBufferPointer(rebasing: rest[0..<(newline ?? rest.count)])
                if isTooLong(length: carry.count + piece.count, last: piece.last ?? carry.last) {
                    lineNumber += 1
                    stopped = true
                    carry = []
                    close()
                    return try body(.tooLong)
                }
                guard let newline else {
                    carry.append(contentsOf: piece)
                    start = end
                    continue
                }
                start += newline + 1
                lineNumber += 1
                guard carry.isEmpty else { return try finishCarried(adding: piece, body) }
                return try give(piece, body)
            }
            if atEnd {
                guard !carry.isEmpty else { return nil }
                lineNumber += 1
                return try finishCarried(adding: UnsafeBufferPointer(start: nil, count: 0), body)
            }
            try fill()
        }
        return nil
    }

    /// Whether a line (or the start of one) of `length` bytes, the last `last`, is longer than a line may be:
    /// past the longest line and a `\r`, or as long as that without the `\r`.
    private func isTooLong(length: Int, last: UInt8?) -> Bool {
        length > keep || (length == keep && last != 0x0D)
    }

    private func finishCarried<R>(adding piece: UnsafeBufferPointer<UInt8>, _ body: (Line) throws -> R) throws -> R {
        carry.append(contentsOf: piece)
        defer { carry.removeAll(keepingCapacity: carry.capacity <= 1 << 16) }
        return try carry.withUnsafeBufferPointer { try give($0, body) }
    }

    /// Gives a line's bytes to `body`, without the byte order mark that may open the input.
    private func give<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Line) throws -> R) throws -> R {
        if lineNumber == 1, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            return try body(.text(UnsafeBufferPointer(rebasing: bytes[3...])))
        }
        return try body(.text(bytes))
    }

    private func fill() throws {
        while true {
            let count = read(descriptor, chunk.baseAddress, chunk.count)
            if count >= 0 {
                start = 0
                end = count
                atEnd = count == 0
                return
            }
            guard errno == EINTR else {
                throw ToolFailure(.rejected, "\(name): cannot be read (\(String(cString: strerror(errno)))); nothing was written")
            }
        }
    }
}
