import ArgumentParser
import Foundation
import PermissionLedger

/// Writes one line to standard error, ``displayed(_:)``: whatever a message quotes (a file name, an argument,
/// a value of the input), it stays one line and cannot steer the terminal (docs/spec/CLI.md, "Common").
/// When standard error cannot be written either, nothing is left to tell: the exit code still says it.
func printError(_ line: String) {
    _ = writeAll(Array((displayed(line) + "\n").utf8), to: STDERR_FILENO)
}

/// Standard output, buffered: large exports are written in chunks. Output that cannot be written (a full disk,
/// an I/O error) throws exit 6 with one line (docs/spec/CLI.md, "Common"), where `FileHandle.write` would trap.
struct Output {
    private var buffer: [UInt8] = []

    mutating func write(_ text: String) throws(ToolFailure) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    mutating func line(_ text: String) throws(ToolFailure) { try write(text + "\n") }

    /// Writes what is buffered. After a failure the buffer is dropped, so that nothing is written twice.
    mutating func flush() throws(ToolFailure) {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        if let code = writeAll(buffer, to: STDOUT_FILENO) { throw .outputFailed(errno: code) }
    }
}

/// Writes all of `bytes` to the file descriptor `fd`, through short writes and interruptions; `nil`, or the
/// `errno` of the write that failed.
private func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
    bytes.withUnsafeBytes { raw -> Int32? in
        guard let base = raw.baseAddress else { return nil }
        var offset = 0
        while offset < raw.count {
            let written = write(fd, base + offset, raw.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            // A write of nothing would never end: an I/O error.
            guard written > 0 else { return EIO }
            offset += written
        }
        return nil
    }
}

func writeOut(_ text: String) throws(ToolFailure) {
    var out = Output()
    try out.line(text)
    try out.flush()
}

func writeOut(_ text: String, terminator: String) throws(ToolFailure) {
    var out = Output()
    try out.write(text + terminator)
    try out.flush()
}
