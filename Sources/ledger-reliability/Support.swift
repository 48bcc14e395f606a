import ChildProcess
import Foundation
import PermissionLedger
import Synchronization

/// Lines written whole to a file descriptor, from any task: each `write` is one `write(2)`, so a process
/// killed at any moment leaves only whole lines behind (and perhaps one cut-off last line, which readers
/// of the file ignore).
final class LineOutput: Sendable {
    private let fd: Mutex<Int32>

    init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        guard fd >= 0 else { throw Failure("\(path): \(String(cString: strerror(errno)))") }
        self.fd = Mutex(fd)
    }

    func write(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        let text = Array((lines.joined(separator: "\n") + "\n").utf8)
        fd.withLock { fd in
            var offset = 0
            while offset < text.count {
                let written = text[offset...].withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
                if written < 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    deinit { fd.withLock { _ = close($0) } }
}

/// The whole lines of a file (a cut-off last line is left out).
func wholeLines(of path: String) -> [Substring] {
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return [] }
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    lines.removeLast()  // Empty after a final newline, or a cut-off line.
    return lines
}

/// A plain failure of this tool, printed as is.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Starts this executable with `arguments`, its standard output and error going to `output`.
func spawnSelf(_ arguments: [String], output: String) throws -> pid_t {
    let request = SpawnRequest(
        executable: .own(fallbackName: "ledger-reliability"),
        arguments: [CommandLine.arguments.first ?? "ledger-reliability"] + arguments,
        fileActions: [.open(output, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644, as: 1), .duplicate(1, as: 2)])
    do {
        return try request.spawn()
    } catch {
        throw Failure(error.description)
    }
}

/// Seconds since an arbitrary start, from the monotonic clock.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Prints to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// `12345678` as `12,345,678`.
func grouped(_ value: some BinaryInteger) -> String {
    let digits = Array(String(value))
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return out
}

/// What is wrong when the key store of `ledger` holds keys that no commit names (left by a write a kill kept from
/// committing, which a write or an open for writing destroys); `nil` when it holds none.
func keysNamedByNothingProblem(_ ledger: Ledger) throws -> String? {
    switch try ledger.keysNamedByNothing() {
    case 0: nil
    case 1: "a key that no commit names is still readable in the key store"
    case let count: "\(count) keys that no commit names are still readable in the key store"
    }
}
