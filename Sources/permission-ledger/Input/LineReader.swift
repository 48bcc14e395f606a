import Foundation
import PermissionLedger

/// Splits what a file descriptor gives into lines, reading a chunk at a time: it keeps one chunk and at
/// most one line (of at most ``EventJSON/maxLineBytes`` and a `\r`; of a longer line only the length).
final class LineReader {
    /// One line, without its `\n`.
    enum Line {
        /// The line's bytes, valid only during the call they are given to.
        case text(UnsafeBufferPointer<UInt8>)
        /// A line too long to be an event, of `length` bytes without a trailing `\r`: its bytes were not kept.
        case tooLong(length: Int)
    }

    /// The name problems are reported with: the path as given, or `<stdin>`.
    let name: String
    /// The number of the last line given (1 for the first).
    private(set) var lineNumber = 0
    /// The size of a regular file; `nil` for a pipe or a terminal.
    let size: Int?
    let isDirectory: Bool

    private var descriptor: Int32
    private let owned: Bool
    private let chunk: UnsafeMutableBufferPointer<UInt8>
    /// The bytes of `chunk` not yet given, `start..<end`.
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// The start of a line that began in an earlier chunk (at most `keep` bytes of it).
    private var carry: [UInt8] = []
    /// How many bytes that line has so far, also those not kept, and the last of them.
    private var carried = 0
    private var carriedLast: UInt8 = 0
    /// The most bytes of a line kept: the longest line allowed and a `\r`.
    private let keep = EventJSON.maxLineBytes + 1

    init(name: String, descriptor: Int32, owned: Bool, chunkSize: Int) {
        self.name = name
        self.descriptor = descriptor
        self.owned = owned
        chunk = .allocate(capacity: max(1, chunkSize))
        var info = stat()
        if fstat(descriptor, &info) == 0 {
            let type = info.st_mode & S_IFMT
            size = type == S_IFREG ? Int(info.st_size) : nil
            isDirectory = type == S_IFDIR
        } else {
            size = nil
            isDirectory = false
        }
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

    /// Calls `body` with the next line and returns what it returns, or returns `nil` at the end of the file.
    ///
    /// - Throws: ``ToolFailure`` (exit 1) when the file cannot be read.
    func nextLine<R>(_ body: (Line) throws -> R) throws -> R? {
        while true {
            if start < end {
                let rest = UnsafeBufferPointer(rebasing: chunk[start..<end])
                if let offset = rest.firstIndex(of: 0x0A) {
                    let newline = start + offset
                    let piece = UnsafeBufferPointer(rebasing: chunk[start..<newline])
                    start = newline + 1
                    lineNumber += 1
                    if carried == 0 {
                        guard piece.count > keep else { return try body(.text(piece)) }
                        return try body(.tooLong(length: piece.count - (piece.last == 0x0D ? 1 : 0)))
                    }
                    carryOver(piece)
                    return try finishCarried(body)
                }
                carryOver(rest)
                start = end
            }
            if atEnd {
                guard carried > 0 else { return nil }
                lineNumber += 1
                return try finishCarried(body)
            }
            try fill()
        }
    }

    private func carryOver(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        let room = max(0, keep - carry.count)
        carry.append(contentsOf: UnsafeBufferPointer(rebasing: bytes.prefix(room)))
        carried += bytes.count
        carriedLast = bytes.last!
    }

    private func finishCarried<R>(_ body: (Line) throws -> R) throws -> R {
        defer {
            carry.removeAll(keepingCapacity: carry.capacity <= 1 << 16)
            carried = 0
        }
        guard carried <= keep else { return try body(.tooLong(length: carried - (carriedLast == 0x0D ? 1 : 0))) }
        return try carry.withUnsafeBufferPointer { try body(.text($0)) }
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
