import Foundation
import PermissionLedger
import Testing
@testable import permission_ledger

/// How `import` splits its files into lines, chunk by chunk, with chunks much smaller than a line.
@Suite("import's line reader")
struct LineReaderTests {
    enum Read: Equatable {
        case text(String)
        case tooLong
    }

    /// Every line of `bytes`, read `chunkSize` bytes at a time, with its number.
    static func lines(of bytes: [UInt8], chunkSize: Int) throws -> [(number: Int, line: Read)] {
        try withSandbox { sandbox in
            let file = sandbox.path("input")
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let files = try EventFiles.open([file], chunkSize: chunkSize)
            let reader = try #require(files.readers.first)
            var lines: [(Int, Read)] = []
            while let line = try reader.nextLine({ line -> Read in
                switch line {
                case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
                case .tooLong: .tooLong
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

    /// A line longer than any event may be is reported as soon as its bytes pass the limit, and the reader stops
    /// there: the next line starts only where the long one ends, which may be never.
    @Test("a line of 1 MiB (and a CR) is given whole; a longer one is reported, and nothing after it is read",
          arguments: [1000, 4096, 1 << 20, 3 << 20])
    func overlongLines(_ chunkSize: Int) throws {
        let limit = EventJSON.maxLineBytes
        let longest = String(repeating: "a", count: limit)
        // Kept whole up to the longest line allowed and a `\r` (decoding rejects what is longer).
        let kept = ["short", longest, longest + "\r"]
        for tooLong in [longest + "b", longest + "b\r", longest + "\rb", String(repeating: "c", count: 3 * limit)] {
            let texts = kept + [tooLong, "after"]
            let read = try Self.lines(of: Array(texts.joined(separator: "\n").utf8), chunkSize: chunkSize)
            #expect(read.map(\.number) == [1, 2, 3, 4])
            // Long texts as their length and last character, to keep a failure's message short.
            let summary = read.map { number, line -> String in
                guard case .text(let text) = line, text.utf8.count > 100 else { return "\(line)" }
                return "text of \(text.utf8.count) bytes ending in \(text.utf8.last!)"
            }
            #expect(summary == [
                "text(\"short\")", "text of \(limit) bytes ending in 97", "text of \(limit + 1) bytes ending in 13", "tooLong",
            ])
        }
    }

    /// `/dev/zero` has no newline ever: the reader stops once the limit is passed instead of reading on.
    @Test("a line with no end (/dev/zero) is reported as too long, and the reading stops")
    func endlessLine() throws {
        let files = try EventFiles.open(["/dev/zero"])
        let reader = try #require(files.readers.first)
        let first = try reader.nextLine { line -> Bool in if case .tooLong = line { true } else { false } }
        #expect(first == true)
        #expect(try reader.nextLine { _ in () } == nil)
    }

    /// RFC 8259 lets a parser ignore a byte order mark at the start; elsewhere it stays part of the line.
    @Test("a UTF-8 byte order mark is skipped at the start of the input only", arguments: [1, 2, 4, 1 << 20])
    func byteOrderMark(_ chunkSize: Int) throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let read = try Self.lines(of: bom + Array("first\n".utf8) + bom + Array("second".utf8), chunkSize: chunkSize)
        #expect(read.map(\.line) == [.text("first"), .text("\u{FEFF}second")])
    }
}
