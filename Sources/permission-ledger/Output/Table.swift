import Foundation
import PermissionModel

/// Rows for people (an aligned table) or for programs (RFC 4180 CSV).
///
/// Cells hold values as they are; both forms show each one ``displayed(_:)`` (docs/spec/CLI.md, "Common"),
/// and whole: a long value widens its column, so that ids and handles can be copied from a table as they are.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) {
        self.headers = headers
    }

    mutating func add(_ row: String...) { rows.append(row) }
    mutating func add(row: [String]) { rows.append(row) }

    func csv() -> String {
        ([headers] + rows).map { $0.map(csvField).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    func text() -> String {
        let shownRows = ([headers] + rows).map { $0.map(displayed) }
        var widths = headers.map { _ in 0 }
        for row in shownRows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], columns(cell)) }
        }
        func line(_ cells: [String]) -> String {
            // The last column is not padded, so that no line ends with spaces of the layout.
            cells.enumerated().map { i, cell in
                i + 1 < cells.count ? cell + String(repeating: " ", count: max(0, widths[i] - columns(cell))) : cell
            }.joined(separator: "  ")
        }
        var out = [line(shownRows[0]), line(widths.map { String(repeating: "-", count: $0) })]
        out += shownRows.dropFirst().map(line)
        if rows.isEmpty { out.append("(none)") }
        return out.joined(separator: "\n") + "\n"
    }

    func render(_ format: OutputFormat) -> String {
        format == .csv ? csv() : text()
    }
}

/// One CSV field: the value ``displayed(_:)`` (so it holds no CR or LF), with a `'` before it when a
/// spreadsheet would take it for a formula (it begins with `=`, `+`, `-`, `@`, a tab or a carriage return,
/// and is not a plain number), quoted as RFC 4180 asks when it holds a comma or a quote.
func csvField(_ value: String) -> String {
    var shown = displayed(value)
    if let first = shown.utf8.first, [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D].contains(first),
       !isPlainNumber(shown) {
        shown = "'" + shown
    }
    // By bytes: "\r\n" is one Swift Character, equal to neither "\r" nor "\n".
    guard shown.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else {
        return shown
    }
    return "\"" + shown.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// A sign, ASCII digits and at most one point between digits (`-12`, `+15550100101`): a spreadsheet reads it
/// as a number, nothing more, so it keeps its form.
private func isPlainNumber(_ text: String) -> Bool {
    guard let sign = text.utf8.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") else { return false }
    let digits = text.utf8.dropFirst()
    let parts = digits.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    return parts.count <= 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
}

/// A time for people, in tables: UTC, with a space for the `T` and without the `Z` (`2026-11-20 18:59:22`,
/// `2026-11-20 18:59:22.250000`); whole, as JSON and CSV write it otherwise.
func tableTime(_ t: Timestamp?) -> String {
    guard let t else { return "" }
    let text = t.description
    guard text.utf8.count > 11, text.hasSuffix("Z") else { return text }
    return String(text.prefix(10)) + " " + String(text.dropFirst(11).dropLast())
}
