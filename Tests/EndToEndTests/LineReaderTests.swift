import Foundation
import PermissionLedger
import Testing
@testable import permission_ledger

/// How `import` splits its files into lines, chunk by chunk, with chunks much smaller than a line.
@Suite("import's line reader")
struct LineReaderTests {
    enum Read: Equatable {
        case text(String)
        case tooLong(Int)
    }

    /// Every line of `bytes`, read `chunkSize` bytes at a time, with its number.
    static func lines(of bytes: [UInt8], chunkSize: Int) throws -> [(number: Int, line: Read)] {
        try withSandbox { sandbox in
            let file = sandbox.path("input")
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let files = try EventFiles.open([file], chunkSize: chunkSize)
            let reader = try #require(files.readers.first)
            #expect(reader.size == bytes.count)
            var lines: [(Int, Read)] = []
            while let line = try reader.nextLine({ line -> Read in
                switch line {
                case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
                case .tooLong(let length): .tooLong(length)
                }
            }) {
                lines.append((reader.lineNumber, line))
            }
            #expect(try reader.nextLine { _ in () } == nil, "the end stays the end")
            return lines
        }
    }

    @Test("gives the lines as splitting the whole file would, whatever the chunk size", arguments: [1, 2, 3, 7, 64, 1 << 20])
    func splitsLikeTheWholeFile(_ chunkSize: Int) throws {
        let texts = ["first", "", "  # a comment", "third\r", String(repeating: "x", count: 300), "", "", "last without a newline"]
        let bytes = Array(texts.joined(separator: "\n").utf8)
        let read = try Self.lines(of: bytes, chunkSize: chunkSize)
        #expect(read.map(\.number) == Array(1...texts.count))
        #expect(read.map(\.line) == texts.map { .text($0) })
        // A final newline ends the last line; it does not start another.
        let ended = try Self.lines(of: bytes + [0x0A], chunkSize: chunkSize)
        #expect(ended.map(\.line) == texts.map { .text($0) })
        #expect(try Self.lines(of: [], chunkSize: chunkSize).isEmpty)
        #expect(try Self.lines(of: [0x0A], chunkSize: chunkSize).map(\.line) == [.text("")])
    }

    /// A line longer than any event may be is not kept whole: only its length, for the report.
    @Test("gives only the length of a line longer than 1 MiB, with a trailing CR not counted", arguments: [1000, 4096, 1 << 20, 3 << 20])
    func overlongLines(_ chunkSize: Int) throws {
        let limit = EventJSON.maxLineBytes
        let longest = String(repeating: "a", count: limit)
        // Kept whole up to the longest line allowed and a `\r` (decoding rejects what is longer), then not.
        let texts = [
            "short", longest, longest + "\r", longest + "b", longest + "bc", longest + "b\r",
            String(repeating: "c", count: 2 * limit) + "\r", "after",
        ]
        let read = try Self.lines(of: Array(texts.joined(separator: "\n").utf8), chunkSize: chunkSize)
        #expect(read.map(\.number) == Array(1...texts.count))
        // Long texts as their length and last character, to keep a failure's message short.
        let summary = read.map { number, line -> String in
            guard case .text(let text) = line, text.utf8.count > 100 else { return "\(line)" }
            return "text of \(text.utf8.count) bytes ending in \(text.utf8.last!)"
        }
        #expect(summary == [
            "text(\"short\")", "text of \(limit) bytes ending in 97", "text of \(limit + 1) bytes ending in 13",
            "text of \(limit + 1) bytes ending in 98", "tooLong(\(limit + 2))", "tooLong(\(limit + 1))",
            "tooLong(\(2 * limit))", "text(\"after\")",
        ])
        #expect(EventJSON.rejection(forLineOfLength: limit) == nil)
        // The report of a line whose bytes were not kept is the one of decoding it.
        #expect(throws: EventJSON.rejection(forLineOfLength: limit + 1)!) {
            try EventJSON.decode(line: Array((longest + "b").utf8))
        }
    }
}
