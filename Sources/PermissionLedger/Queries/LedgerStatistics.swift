import Foundation
internal import LMDB
import PermissionModel

/// What a ledger holds as of a point, and how much room it takes: what `permission-ledger stats` prints.
/// Ask ``Ledger/statistics(asOf:)`` for it.
public struct LedgerStatistics: Hashable, Sendable, CustomStringConvertible {
    /// The log's head (independent of the point).
    public var head: LogHead
    /// The point the counts are as of.
    public var point: AsOfPoint
    /// How many events of each type the log holds up to the point; types without events are absent.
    public var eventsByType: [EventType: UInt64]
    /// How many subjects have an event at or before the point.
    public var subjects: Int
    /// How many questions are in each state at the point; states without questions are absent.
    public var questionsByState: [QuestionState: Int]
    /// The room the ledger takes now (independent of the point).
    public var sizes: Sizes
    /// The path of the ledger's key file (followed by ` (not found)` when the ledger was opened read-only without
    /// it); `nil` for a ledger of format 1, which has no keys.
    public var keyFile: String?
    /// The head of the format 1 ledger this one was migrated from (``Ledger/migrate(from:to:options:)``), or `nil`.
    public var migratedFrom: LogHead?

    /// The room a ledger takes, in bytes.
    public struct Sizes: Hashable, Sendable {
        /// The data file's size (`data.mdb`): what a backup copies at most.
        public var fileBytes: Int64
        /// The pages of the data file up to the last one in use, free pages among them.
        public var usedBytes: Int64
        /// The size of LMDB's memory map: address space, grown by doubling as the ledger fills it.
        public var mapBytes: Int64

        /// Sizes as given.
        public init(fileBytes: Int64, usedBytes: Int64, mapBytes: Int64) {
            self.fileBytes = fileBytes
            self.usedBytes = usedBytes
            self.mapBytes = mapBytes
        }
    }

    /// How many events the log holds up to the point.
    public var events: UInt64 { eventsByType.values.reduce(0, +) }
    /// How many questions had been asked by the point.
    public var questions: Int { questionsByState.values.reduce(0, +) }

    /// A few lines for people: events by type, subjects, questions by state and the sizes, e.g.
    ///
    /// ```
    /// 1,204 events as of seq 1204 (head seq 1204, recorded 2026-11-20T18:02:11Z)
    ///   question.asked 300, question.answered 251, handles.observed 600, ...
    /// 4 subjects; 300 questions: 251 approved or denied, 12 pending, ...
    /// data file 1.2 MiB, 0.9 MiB in use, map 64.0 MiB
    /// ```
    public var description: String {
        let head = "head seq \(self.head.seq)" + (self.head.recordedAt.map { ", recorded \($0)" } ?? "")
        var lines = ["\(Self.count(events)) event\(events == 1 ? "" : "s") as of seq \(point.seq) (\(head))"]
        let types = EventType.allCases.compactMap { type in eventsByType[type].map { "\(type.rawValue) \(Self.count($0))" } }
        if !types.isEmpty { lines.append("  " + types.joined(separator: ", ")) }
        let states = QuestionState.allCases.compactMap { state in questionsByState[state].map { "\(state.rawValue) \(Self.count($0))" } }
        lines.append("\(Self.count(subjects)) subject\(subjects == 1 ? "" : "s"); \(Self.count(questions)) question\(questions == 1 ? "" : "s")"
            + (states.isEmpty ? "" : ": " + states.joined(separator: ", ")))
        lines.append("data file \(Self.mebibytes(sizes.fileBytes)), \(Self.mebibytes(sizes.usedBytes)) in use, map \(Self.mebibytes(sizes.mapBytes))")
        lines.append(keyFile.map { "key file \($0)" } ?? "no keys: storage format 1, personal fields unencrypted")
        if let migratedFrom { lines.append("migrated from a ledger whose head was seq \(migratedFrom.seq), hash \(migratedFrom.hash)") }
        return lines.joined(separator: "\n")
    }

    private static func count(_ value: some BinaryInteger) -> String {
        let digits = Array(String(value))
        var text = ""
        for (i, digit) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    private static func mebibytes(_ bytes: Int64) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}

extension Ledger {
    /// Counts of events by type up to a point, subjects and questions by state at the point, and the sizes
    /// of the ledger's files. It reads the log up to the point: it runs on a thread of its own, not on the
    /// cooperative pool, and stops with `CancellationError` when the task is cancelled.
    public func statistics(asOf: AsOf = .now) async throws -> LedgerStatistics {
        try await offPool("ledger-statistics") { [self] cancellation in
            try statistics(asOf: asOf, cancellation: cancellation)
        }
    }

    /// ``statistics(asOf:)`` on the calling thread, for the tool and tests.
    package func statistics(asOf: AsOf = .now) throws -> LedgerStatistics {
        try statistics(asOf: asOf, cancellation: nil)
    }

    private func statistics(asOf: AsOf, cancellation: Cancellation?) throws -> LedgerStatistics {
        let sizes = try storageSizes()
        var statistics = try read(asOf: asOf, retries: Self.readRetries) { try $0.statistics(sizes: sizes, cancellation: cancellation) }
        statistics.keyFile = tables.keys == nil ? nil : tables.keyRing?.ledgerKey.location.path ?? tables.keyLocation.path + " (not found)"
        statistics.migratedFrom = try migratedFrom()
        return statistics
    }

    /// The sizes of the ledger's data file, of what it uses and of the map.
    func storageSizes() throws -> LedgerStatistics.Sizes {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        let fileBytes = ((try? FileManager.default.attributesOfItem(atPath: dataFile))?[.size] as? NSNumber)?.int64Value ?? 0
        do {
            return .init(fileBytes: fileBytes, usedBytes: Int64(try environment.usedSize), mapBytes: Int64(environment.mapSize))
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }
}
