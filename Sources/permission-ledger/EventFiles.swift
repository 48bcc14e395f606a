import Foundation
import PermissionLedger

/// Events read from JSON Lines files, each with where it came from.
struct EventFiles {
    struct Located {
        var event: PermissionEvent
        var place: String
        /// The line's rank across all the files, to report problems in input order.
        var order: Int
    }

    static let maxReported = 100

    var events: [Located] = []
    /// Problems found while reading, in input order, each with its place: `FILE:LINE: reason`.
    var problems: [(order: Int, line: String)] = []
    private var order = 0

    /// Reports progress of long imports on standard error, when it is a terminal.
    struct Progress {
        let enabled = isatty(STDERR_FILENO) == 1
        func show(_ text: String) {
            guard enabled else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        }
        func done() {
            guard enabled else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
    }

    let progress = Progress()

    /// Reads and parses the files (`-` is standard input). Lines that do not parse become problems.
    static func read(_ files: [String]) throws -> EventFiles {
        var result = EventFiles()
        for file in files {
            let name = file == "-" ? "<stdin>" : file
            let data: Data
            if file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let contents = FileManager.default.contents(atPath: file) else {
                    let why = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "no such file"
                    throw ToolFailure(.rejected, "\(file): \(why); nothing was written")
                }
                data = contents
            }
            result.parse(Array(data), name: name)
        }
        return result
    }

    private mutating func parse(_ bytes: [UInt8], name: String) {
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            lineNumber += 1
            order += 1
            if lineNumber % 50_000 == 0 { progress.show("reading \(name): \(lineNumber) lines") }
            let place = "\(name):\(lineNumber)"
            do {
                if let event = try EventJSON.decode(line: bytes[start..<end]) {
                    events.append(Located(event: event, place: place, order: order))
                }
            } catch {
                problems.append((order, "\(place): \(error)"))
            }
            start = end + 1
        }
    }

    /// Checks and appends the events in one transaction: all or nothing.
    ///
    /// - Throws: ``ToolFailure`` with exit 1 and every problem (up to 100) when any line is rejected.
    func append(to ledger: Ledger) throws -> Ledger.AppendSummary {
        let plain = events.map(\.event)
        var lines = problems
        func fail() -> ToolFailure {
            var sorted = lines.sorted { $0.order < $1.order }.map(\.line)
            let total = sorted.count
            if total > Self.maxReported {
                sorted = Array(sorted.prefix(Self.maxReported))
                sorted.append("… and more problems; the first \(Self.maxReported) are shown")
            }
            sorted.append("rejected: nothing was written")
            return ToolFailure(.rejected, lines: sorted)
        }
        let total = plain.count
        let report: ((Int) -> Void)? = progress.enabled && total >= 20_000
            ? { [progress] done in progress.show("checking and writing: \(done) of \(total) events") } : nil
        defer { progress.done() }
        do {
            if problems.isEmpty {
                return try ledger.appendSynchronously(plain, maxRejections: Self.maxReported, progress: report)
            }
            // Some lines did not parse: still check the rest against the rules, to report everything at once.
            _ = try ledger.validate(plain, maxRejections: Self.maxReported, progress: report)
            throw fail()
        } catch let rejected as AppendRejected {
            for (index, rejection) in rejected.rejections {
                lines.append((events[index].order, "\(events[index].place): \(rejection)"))
            }
            throw fail()
        } catch let failure as ToolFailure {
            throw failure
        } catch {
            throw ToolFailure(error)
        }
    }
}
