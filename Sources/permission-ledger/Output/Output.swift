import ArgumentParser
import Foundation
import PermissionLedger

/// Writes one line to standard error, ``displayed(_:)``: whatever a message quotes (a file name, an argument,
/// a value of the input), it stays one line and cannot steer the terminal (docs/spec/CLI.md, "Common").
func printError(_ line: String) {
    FileHandle.standardError.write(Data((displayed(line) + "\n").utf8))
}

/// Standard output, buffered: large exports are written in chunks.
struct Output {
    private var buffer: [UInt8] = []

    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func line(_ text: String) { write(text + "\n") }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

func writeOut(_ text: String) {
    var out = Output()
    out.line(text)
    out.flush()
}

func writeOut(_ text: String, terminator: String) {
    var out = Output()
    out.write(text + terminator)
    out.flush()
}
