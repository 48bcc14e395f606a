import Foundation
import PermissionLedger

/// The JSON Lines files of an import, read line by line in chunks and streamed into the ledger: memory
/// stays bounded by a chunk and one line, whatever the size of the files.
///
/// Every file is opened before anything is written, so that a missing or unreadable one (the second,
/// say) stops the import while the ledger is untouched.
struct EventFiles {
    static let maxReported = 100
    /// The bytes read from a file at a time.
    static let defaultChunkSize = 1 << 20
    let readers: [LineReader]

    /// The report of a line too long, which is also the last read of its input (see ``LineReader``).
    static let tooLong = EventRejection(
        "the line is longer than \(EventJSON.maxLineBytes) bytes: at most \(EventJSON.maxLineBytes) (1 MiB) are allowed; the rest of this input was not read")

    /// Opens the files (`-` is standard input), reading each `chunkSize` bytes at a time.
    ///
    /// - Throws: ``ToolFailure`` with exit 1 naming the first file that does not exist or cannot be read.
    static func open(_ files: [String], chunkSize: Int = defaultChunkSize) throws -> EventFiles {
        var readers: [LineReader] = []
        for file in files {
            if file == "-" {
                readers.append(LineReader(name: "<stdin>", descriptor: STDIN_FILENO, owned: false, chunkSize: chunkSize))
                continue
            }
            let descriptor = Foundation.open(file, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let why = errno == ENOENT || errno == ENOTDIR ? "no such file" : "cannot be read"
                throw ToolFailure(.rejected, "\(file): \(why); nothing was written")
            }
            let reader = LineReader(name: file, descriptor: descriptor, owned: true, chunkSize: chunkSize)
            if reader.isDirectory { throw ToolFailure(.rejected, "\(file): cannot be read; nothing was written") }
            readers.append(reader)
        }
        return EventFiles(readers: readers)
    }

    /// A line of one of the files.
    struct Place {
        var file: Int
        var line: Int
    }

    /// Where each event given to the ledger came from, by its index in the stream, for the rejections the ledger
    /// makes only once the stream ends (an erased event whose erasure never came). Kept as runs of consecutive
    /// lines of one file: a new run only where a line gives no event (a blank line, a comment, a line that does
    /// not parse) or a file begins, so an export takes one run per file. Past `maxRuns`, no more are kept, and
    /// an event beyond them is named by its rank.
    struct EventPlaces {
        static let maxRuns = 1 << 20
        /// The index of each run's first event, and where that event came from.
        private var runs: [(index: Int, place: Place)] = []
        private var last: (index: Int, place: Place)?
        private var full = false

        mutating func note(index: Int, _ place: Place) {
            defer { last = (index, place) }
            if let last, last.place.file == place.file, last.place.line + 1 == place.line { return }
            guard runs.count < Self.maxRuns else {
                full = true
                return
            }
            runs.append((index, place))
        }

        subscript(index: Int) -> Place? {
            if full, let last = runs.last, index > last.index { return nil }
            // The last run starting at or before `index`.
            var (low, high) = (0, runs.count)
            while low < high {
                let middle = (low + high) / 2
                if runs[middle].index <= index { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let run = runs[low - 1]
            return Place(file: run.place.file, line: run.place.line + (index - run.index))
        }
    }

    /// Reports progress of long imports on standard error, when it is a terminal.
    struct Progress {
        let enabled = isatty(STDERR_FILENO) == 1
        func show(_ text: String) {
            guard enabled else { return }
            writeToStandardError("\r\u{1B}[K\(text)")
        }
        func done() {
            guard enabled else { return }
            writeToStandardError("\r\u{1B}[K")
        }
    }

    let progress = Progress()

    /// Why the stream of events was cut: problems were found in the input (the events that were checked
    /// are thrown away with the transaction).
    private struct InputProblems: Error {}

    /// Reads, checks and appends the events of the files in order, in one transaction: all or nothing.
    ///
    /// Lines that do not parse do not stop the reading: the lines after them are still checked against
    /// the rules, so that one run reports every problem (up to ``maxReported``), in input order, as
    /// `FILE:LINE: reason`; then nothing is written.
    ///
    /// - Throws: ``ToolFailure`` with exit 1 and every problem (up to 100) when any line is rejected or a
    ///   file cannot be read; with the ledger's exit code when it cannot be written.
    func append(to ledger: Ledger) throws -> Ledger.StreamedAppendSummary {
        // In input order: a line's parse problem is found when it is read, its rule rejection right after.
        // One more than is shown tells that there are more.
        var problems: [(place: Place, text: String)] = []
        var events = 0
        /// Where the last event given to the ledger came from.
        var place = Place(file: 0, line: 0)
        /// Where every event given came from, for the rejections the ledger makes at the end.
        var places = EventPlaces()
        /// Whether the reading stopped before the end of the input.
        var stoppedEarly = false
        // Read and decoded on a thread of their own, while the rules run on this one.
        let decodedLines = DecodedLines(readers) { line in
            switch line {
            case .text(let bytes): Result { () throws(EventRejection) in try EventJSON.decode(line: bytes) }
            case .tooLong: .failure(Self.tooLong)
            }
        }

        func next() throws -> PermissionEvent? {
            while let line = try decodedLines.next() {
                if problems.count > Self.maxReported {
                    // Cut short: an erased event's erasure may be in the lines not read.
                    stoppedEarly = true
                    throw InputProblems()
                }
                let name = readers[line.file].name
                if line.number % 50_000 == 0 {
                    progress.show("importing \(name): \(line.number) lines, \(events) events checked")
                }
                switch line.decoded {
                case .success(nil):
                    continue
                case .success(let event?):
                    place = Place(file: line.file, line: line.number)
                    places.note(index: events, place)
                    events += 1
                    return event
                case .failure(let rejection):
                    problems.append((Place(file: line.file, line: line.number), "\(name):\(line.number): \(rejection)"))
                }
            }
            // Every line was checked: throwing aborts the transaction when any was rejected.
            if !problems.isEmpty { throw InputProblems() }
            return nil
        }

        defer {
            progress.done()
            decodedLines.stop()
            for reader in readers { reader.close() }
        }
        do {
            return try ledger.appendSynchronously(
                streaming: next, maxRejections: Self.maxReported + 1,
                onRejection: { index, rejection in
                    // Most rejections are of the event just given; an erased event's may come at the end.
                    // Once the reading stopped early, what comes is the end's check of erased events, whose
                    // erasure may be in the lines not read: those problems are not reported.
                    if stoppedEarly { return }
                    if let at = index == events - 1 ? place : places[index] {
                        problems.append((at, "\(readers[at.file].name):\(at.line): \(rejection)"))
                    } else {
                        // Beyond the places kept: named by its rank among the input's events.
                        problems.append((place, "event \(index + 1) of the input: \(rejection)"))
                    }
                })
        } catch is InputProblems {
        } catch is AppendRejected {
        } catch let failure as ToolFailure {
            throw failure
        } catch {
            throw ToolFailure(error)
        }
        // In input order, the erased events' rejections among the others.
        problems.sort { ($0.place.file, $0.place.line) < ($1.place.file, $1.place.line) }
        var lines = problems.prefix(Self.maxReported).map(\.text)
        if problems.count > Self.maxReported {
            lines.append("… and more problems; the first \(Self.maxReported) are shown")
        }
        lines.append("rejected: nothing was written")
        throw ToolFailure(.rejected, lines: lines)
    }
}
