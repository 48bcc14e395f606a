import Foundation

/// Rows for people (an aligned table that fits 80 columns) or for programs (RFC 4180 CSV).
struct Table {
    var headers: [String]
    var rows: [[String]] = []
    /// The widest a column may be in a table before its values are shortened with an ellipsis.
    var maxWidths: [Int]?
    /// Columns never shortened (ids and times): an audit must not lose them.
    var fixed: Set<Int> = []

    init(_ headers: String...) {
        self.headers = headers
        fixed = Set(headers.indices.filter { headers[$0] == "id" || headers[$0].hasSuffix(" at") || headers[$0] == "since" || headers[$0] == "until" || headers[$0] == "seq" })
    }

    mutating func add(_ row: String...) { rows.append(row) }
    mutating func add(row: [String]) { rows.append(row) }

    func csv() -> String {
        func field(_ s: String) -> String {
            s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
        }
        return ([headers] + rows).map { $0.map(field).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    func text(width: Int = 80) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        if let maxWidths {
            for i in widths.indices where i < maxWidths.count { widths[i] = min(widths[i], max(maxWidths[i], headers[i].count)) }
        }
        // Shrink the widest free-text column until the table fits; ids and times keep their width.
        while widths.reduce(0, +) + 2 * (widths.count - 1) > width,
              let widest = widths.indices.filter({ !fixed.contains($0) && widths[$0] > 8 }).max(by: { widths[$0] < widths[$1] }) {
            widths[widest] -= 1
        }
        func fit(_ s: String, _ w: Int) -> String {
            let shown = s.count > w ? String(s.prefix(w - 1)) + "…" : s
            return shown + String(repeating: " ", count: w - shown.count)
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { fit($0, $1) }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        var out = [line(headers), line(widths.map { String(repeating: "-", count: $0) })]
        out += rows.map(line)
        if rows.isEmpty { out.append("(none)") }
        return out.joined(separator: "\n") + "\n"
    }

    func render(_ format: OutputFormat) -> String {
        format == .csv ? csv() : text()
    }
}
