import Foundation
import PermissionModel

/// Rows for people (an aligned table) or for programs (RFC 4180 CSV).
///
/// Cells hold values as they are; both forms show each one ``displayed(_:)`` (docs/spec/CLI.md, "Common"),
/// and whole: a long value widens its column, so that ids and handles can be copied from a table as they are.
/// Both are written a line at a time (``write(_:to:)``), so that a table of a million rows goes out as it is
/// made instead of as one string.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) {
        self.headers = headers
    }

    mutating func add(_ row: String...) { rows.append(row) }
    mutating func add(row: [String]) { rows.append(row) }

    /// The CSV form, as one string: for small tables.
    func csv() -> String {
        var text = ""
        writeCSV { text += $0 }
        return text
    }

    /// The table form, as one string: for small tables.
    func text() -> String {
        var text = ""
        writeText { text += $0 }
        return text
    }

    /// Writes the table or CSV form to `out`.
    func write(_ format: OutputFormat, to out: inout Output) throws(OutputFailure) {
        if format == .csv {
            try writeCSV { line throws(OutputFailure) in try out.write(line) }
        } else {
            try writeText { line throws(OutputFailure) in try out.write(line) }
        }
    }

    /// Gives `emit` the CSV form a record at a time, each with its CRLF.
    func writeCSV<E: Error>(_ emit: (String) throws(E) -> Void) throws(E) {
        try emit(headers.map(csvField).joined(separator: ",") + "\r\n")
        for row in rows { try emit(row.map(csvField).joined(separator: ",") + "\r\n") }
    }

    /// Gives `emit` the table form a line at a time, each with its newline: the widths of the columns are found
    /// in one pass over the rows, then the lines are made and given one by one.
    func writeText<E: Error>(_ emit: (String) throws(E) -> Void) throws(E) {
        /// The columns a cell takes, shown: its bytes when it is printable ASCII.
        func width(_ cell: String) -> Int { isPrintableASCII(cell) ? cell.utf8.count : columns(displayed(cell)) }
        var widths = headers.map(width)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], width(cell)) }
        }
        func line(_ cells: [String]) -> String {
            // The last column is not padded, so that no line ends with spaces of the layout.
            var text = ""
            for (i, cell) in cells.enumerated() {
                let plain = isPrintableASCII(cell)
                let shown = plain ? cell : displayed(cell)
                text += shown
                if i + 1 < cells.count {
                    text += String(repeating: " ", count: max(0, widths[i] - (plain ? cell.utf8.count : columns(shown))) + 2)
                }
            }
            return text + "\n"
        }
        try emit(line(headers))
        try emit(line(widths.map { String(repeating: "-", count: $0) }))
        for row in rows { try emit(line(row)) }
        if rows.isEmpty { try emit("(none)\n") }
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
    var bytes = Array(t.description.utf8)
    guard bytes.count > 11, bytes.last == UInt8(ascii: "Z") else { return t.description }
    bytes[10] = UInt8(ascii: " ")
    bytes.removeLast()
    return String(decoding: bytes, as: UTF8.self)
}
