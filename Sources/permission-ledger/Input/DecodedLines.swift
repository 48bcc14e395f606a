import Foundation
import PermissionLedger

/// The lines of an import's files, read and decoded on a thread of their own and handed over in input order, a
/// small batch at a time: the ledger applies the rules to one batch while the next is parsed, so that an import
/// uses both cores. At most ``capacity`` batches wait, so memory stays bounded whatever the size of the files.
final class DecodedLines: @unchecked Sendable {
    /// One line as the files gave it, with where it came from.
    struct Line {
        var file: Int
        var number: Int
        var decoded: Result<PermissionEvent?, EventRejection>
    }

    /// What the reading thread hands over: lines, or the error that stopped it (a file that cannot be read).
    private enum Batch {
        case lines([Line])
        case failed(any Error)
    }

    static let batchSize = 256
    static let capacity = 8

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var waiting: [Batch] = []
    private var readingDone = false
    private var stopped = false
    /// The batch being handed out, and the position in it: the consumer's alone.
    private var current: [Line] = []
    private var position = 0

    /// Starts reading `readers` in order on a new thread, decoding each line with `decode`.
    init(_ readers: [LineReader], decode: @escaping @Sendable (LineReader.Line) -> Result<PermissionEvent?, EventRejection>) {
        let files = UncheckedReaders(readers: readers)
        Thread { [self] in self.read(files.readers, decode: decode) }.start()
    }

    /// The next line in input order; `nil` after the last one.
    ///
    /// - Throws: what stopped the reading thread (a file that could not be read), when the lines before it are
    ///   handed out.
    func next() throws -> Line? {
        if position < current.count {
            defer { position += 1 }
            return current[position]
        }
        condition.lock()
        while waiting.isEmpty && !readingDone { condition.wait() }
        guard !waiting.isEmpty else {
            condition.unlock()
            return nil
        }
        let batch = waiting.removeFirst()
        condition.broadcast()
        condition.unlock()
        switch batch {
        case .failed(let error):
            throw error
        case .lines(let lines):
            current = lines
            position = 0
            return try next()
        }
    }

    /// Stops the reading thread and waits until it has stopped: afterwards the readers may be closed. Called
    /// once, when the lines are no longer wanted (all read, or the import given up).
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !readingDone { condition.wait() }
        condition.unlock()
    }

    private func read(_ readers: [LineReader], decode: (LineReader.Line) -> Result<PermissionEvent?, EventRejection>) {
        var lines: [Line] = []
        lines.reserveCapacity(Self.batchSize)
        var failure: (any Error)?
        reading: for (file, reader) in readers.enumerated() {
            while true {
                let decoded: Result<PermissionEvent?, EventRejection>?
                do {
                    decoded = try reader.nextLine(decode)
                } catch {
                    failure = error
                    break reading
                }
                guard let decoded else { break }
                lines.append(Line(file: file, number: reader.lineNumber, decoded: decoded))
                if lines.count == Self.batchSize {
                    guard hand(.lines(lines)) else { break reading }
                    lines.removeAll(keepingCapacity: true)
                }
            }
        }
        if !lines.isEmpty { _ = hand(.lines(lines)) }
        if let failure { _ = hand(.failed(failure)) }
        condition.lock()
        readingDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// Hands `batch` over, waiting while ``capacity`` batches wait; `false` once stopped.
    private func hand(_ batch: Batch) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while waiting.count >= Self.capacity && !stopped { condition.wait() }
        guard !stopped else { return false }
        waiting.append(batch)
        condition.broadcast()
        return true
    }
}

/// The readers, handed to the reading thread, which alone uses them until ``DecodedLines/stop()`` returns.
private struct UncheckedReaders: @unchecked Sendable {
    var readers: [LineReader]
}
