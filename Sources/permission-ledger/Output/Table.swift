import Foundation
import PermissionModel

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
        fixed = Set(headers.indices.filter { headers[$0] == "id" || headers[$0] == "seq" || headers[$0].hasSuffix("(UTC)") })
    }

    mutating func add(_ row: String...) { rows.append(row) }
    mutating func add(row: [String]) { rows.append(row) }

    func csv() -> String {
        func field(_ s: String) -> String {
            // By bytes: "\r\n" is one Swift Character, equal to neither "\r" nor "\n".
            s.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D })
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

/// A time for people, in tables: UTC to the second (`2026-11-20 18:59:22`); JSON and CSV keep it whole.
func tableTime(_ t: Timestamp?) -> String {
    guard let t else { return "" }
    let text = t.description
    return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(8))
}

/// A question id for people, in tables: its first 8 and last 12 hex digits (`FAD10000…000000000358`),
/// which `question` accepts in place of the whole id.
func tableID(_ id: UUID) -> String {
    let text = id.uuidString
    return String(text.prefix(8)) + "…" + String(text.suffix(12))
}
