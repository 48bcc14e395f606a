import Foundation
import PermissionLedger
@testable import permission_ledger
import Testing

/// The import's reading thread (``DecodedLines``): lines handed over in input order, whatever its lead.
@Suite("the import's lines, decoded on a thread of their own")
struct DecodedLinesTests {
    /// A new empty directory, for the caller to remove.
    private func temporaryDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "DecodedLinesTests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A file of `count` lines `line N`, read by a ``LineReader`` in small chunks.
    private func reader(lines count: Int, in directory: String, name: String) throws -> LineReader {
        let path = directory + "/" + name
        try (1...count).map { "line \($0)\n" }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        return LineReader(name: path, descriptor: descriptor, owned: true, chunkSize: 4_096)
    }

    /// Each line made a rejection that names it, so that what comes out shows what went in.
    private static let decode: @Sendable (LineReader.Line) -> Result<PermissionEvent?, EventRejection> = { line in
        guard case .text(let bytes) = line else { return .failure(EventRejection("too long")) }
        return .failure(EventRejection(String(decoding: bytes, as: UTF8.self)))
    }

    @Test("lines come out in input order across files, with their numbers, even when the reader is far ahead")
    func order() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let readers = [try reader(lines: 5_000, in: directory, name: "a"), try reader(lines: 700, in: directory, name: "b")]
        let lines = DecodedLines(readers, decode: Self.decode)
        defer { lines.stop() }
        // The reading thread fills every batch it may hold before the first is taken.
        Thread.sleep(forTimeInterval: 0.3)
        var seen: [(file: Int, number: Int, text: String)] = []
        while let line = try lines.next() {
            guard case .failure(let rejection) = line.decoded else { Issue.record("a line decoded to an event"); break }
            seen.append((line.file, line.number, rejection.description))
        }
        let expected = (1...5_000).map { (0, $0, "line \($0)") } + (1...700).map { (1, $0, "line \($0)") }
        #expect(seen.count == expected.count)
        #expect(zip(seen, expected).allSatisfy { $0.file == $1.0 && $0.number == $1.1 && $0.text == $1.2 })
    }

    @Test("stopping early stops the reading thread, even while it waits for room")
    func stopEarly() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let readers = [try reader(lines: 50_000, in: directory, name: "a")]
        let lines = DecodedLines(readers, decode: Self.decode)
        #expect(try lines.next()?.number == 1)
        Thread.sleep(forTimeInterval: 0.2)
        lines.stop()
        // The thread read no more than what fits while waiting: the file is far from read through.
        #expect(readers[0].lineNumber < 50_000)
        for reader in readers { reader.close() }
    }
}
