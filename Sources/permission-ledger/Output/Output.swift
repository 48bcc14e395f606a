import ArgumentParser
import Foundation
import PermissionModel
import PermissionLedger

/// Writes one line to standard error, ``displayed(_:)``: whatever a message quotes (a file name, an argument,
/// a value of the input), it stays one line and cannot steer the terminal (docs/spec/CLI.md, "Common").
/// When standard error cannot be written either, nothing is left to tell: the exit code still says it.
func printError(_ line: String) {
    _ = writeAll(Array((displayed(line) + "\n").utf8), to: STDERR_FILENO)
}

/// Writes `text` to standard error as it is (a terminal's escape sequences included): for the progress of
/// long imports. A write that fails is dropped, as a line of progress is not worth a failure.
func writeToStandardError(_ text: String) {
    _ = writeAll(Array(text.utf8), to: STDERR_FILENO)
}

/// Standard output could not be written: the `errno` of the write that failed. ``ToolFailure/init(_:)`` makes
/// it exit 6 with one line; a command that knows what did reach its reader says so with
/// ``ToolFailure/outputFailed(errno:saying:)``.
struct OutputFailure: Error {
    var errno: Int32
}

/// Standard output, buffered: what a command writes goes out in chunks as it is produced, not as one string at
/// the end. Output that cannot be written (a full disk, an I/O error) throws ``OutputFailure`` (exit 6, one
/// line: docs/spec/CLI.md, "Common"), where `FileHandle.write` or `print` would trap or fail silently.
struct Output {
    /// The bytes written at a time.
    static let chunkSize = 1 << 16

    private var buffer: [UInt8] = []
    /// How many bytes have reached standard output.
    private(set) var written = 0
    /// How many bytes were given to ``write(_:)``, written or still buffered.
    var given: Int { written + buffer.count }

    init() {
        buffer.reserveCapacity(Self.chunkSize)
    }

    mutating func write(_ text: String) throws(OutputFailure) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.chunkSize { try flush() }
    }

    mutating func write(bytes: [UInt8]) throws(OutputFailure) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.chunkSize { try flush() }
    }

    mutating func line(_ text: String) throws(OutputFailure) {
        try write(text)
        try write("\n")
    }

    /// Writes what is buffered. After a failure the buffer is dropped, so that nothing is written twice.
    mutating func flush() throws(OutputFailure) {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        let (count, failure) = writeAll(buffer, to: STDOUT_FILENO)
        written += count
        if let failure { throw OutputFailure(errno: failure) }
    }
}

/// Writes all of `bytes` to the file descriptor `fd`, through short writes and interruptions: how many bytes
/// were written, and the `errno` of the write that failed (`nil` when all were).
private func writeAll(_ bytes: [UInt8], to fd: Int32) -> (count: Int, errno: Int32?) {
    bytes.withUnsafeBytes { raw -> (Int, Int32?) in
        guard let base = raw.baseAddress else { return (0, nil) }
        var offset = 0
        while offset < raw.count {
            let written = write(fd, base + offset, raw.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return (offset, errno)
            }
            // A write of nothing would never end: an I/O error.
            guard written > 0 else { return (offset, EIO) }
            offset += written
        }
        return (offset, nil)
    }
}

/// Writes `text` and a newline to standard output.
func writeOut(_ text: String) throws(OutputFailure) {
    try writeOut(text, terminator: "\n")
}

func writeOut(_ text: String, terminator: String) throws(OutputFailure) {
    var out = Output()
    try out.write(text)
    try out.write(terminator)
    try out.flush()
}
