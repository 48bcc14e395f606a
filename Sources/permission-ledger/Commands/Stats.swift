import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Count events by type, subjects and questions by state; show the head and the file size.",
        discussion: """
        Example:
          permission-ledger stats --ledger family.ledger
        """)

    @OptionGroup var ledger: LedgerOption
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let stats: LedgerStatistics
        do {
            stats = try opened.statistics(asOf: point ?? .now)
        } catch {
            throw ToolFailure(error)
        }
        let (at, fileBytes) = (stats.point, stats.sizes.fileBytes)
        switch format.resolved {
        case .json:
            try writeOut(QueryJSON.statisticsResult(stats))
        case .table, .csv:
            var table = Table("what", "count")
            table.add("events", String(stats.eventsByType.values.reduce(0, +)))
            for type in EventType.allCases { table.add("  " + type.rawValue, String(stats.eventsByType[type] ?? 0)) }
            table.add("subjects", String(stats.subjects))
            table.add("questions", String(stats.questionsByState.values.reduce(0, +)))
            for state in QuestionState.allCases { table.add("  " + state.rawValue, String(stats.questionsByState[state] ?? 0)) }
            if format.resolved == .csv {
                table.add("headSeq", String(stats.head.seq))
                table.add("fileBytes", String(fileBytes))
                // Empty when there is none: a format 1 ledger has no key; a ledger made here was not migrated.
                table.add("keyFile", stats.keyFile ?? "")
                table.add("migratedFromSeq", stats.migratedFrom.map { String($0.seq) } ?? "")
                table.add("migratedFromHash", stats.migratedFrom.map { $0.hash.description } ?? "")
                try writeOut(table.csv(), terminator: "")
            } else {
                let head = "head seq \(stats.head.seq), \(stats.head.recordedAt.map { "recorded \($0)" } ?? "empty")\n  hash \(stats.head.hash)\n"
                let size = String(format: "data file %.1f MiB", Double(fileBytes) / 1_048_576)
                // The default key file is named without the ledger's path, which the user gave: the line stays short.
                let inDirectory = (ledger.path as NSString).appendingPathComponent("ledger.key")
                let key = stats.keyFile.map { $0 == inDirectory ? "key file ledger.key, in the ledger's directory" : "key file \(displayed($0))" }
                    ?? "no keys: format 1, unencrypted (see permission-ledger migrate)"
                let link = stats.migratedFrom.map { "\nmigrated from a ledger whose head was seq \($0.seq), hash \($0.hash)" } ?? ""
                try writeOut("as of seq \(at.seq), \(at.time)\n\(head)\(size)\n\(key)\(link)\n\n" + table.text(), terminator: "")
            }
        }
    }
}
