import PermissionModel

/// Text and attribute values as an audit report writes them into HTML and SVG: inert, whatever they hold.
///
/// A value is first shown as the tool shows it everywhere (``displayed(_:)``: control, format and bidi characters
/// as `\u{XXXX}`, so that a right-to-left override cannot reorder what follows, nor a terminal escape reach a
/// terminal when the file is printed there), then the five characters that HTML and XML give a meaning are
/// written as character references. What results can only ever be text: in element content and in a quoted
/// attribute value alike, it ends no element and opens none.
enum HTMLText {
    /// `value` as inert text, for element content or a double-quoted attribute value.
    static func escaped(_ value: String) -> String {
        let shown = displayed(value)
        guard shown.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return shown
        }
        var result = ""
        result.reserveCapacity(shown.utf8.count + 16)
        for character in shown.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// Text of several lines (a signed note, shell commands) for a `<pre>`: each line ``escaped(_:)``, the line
    /// feeds between them kept.
    static func escapedLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "\n")
    }

    /// A time as people read it, `2026-11-20 09:00:01 UTC`, in a `<time>` element that holds it in RFC 3339.
    static func time(_ time: Timestamp) -> String {
        "<time datetime=\"\(time)\">\(readable(time))</time>"
    }

    /// `2026-11-20 09:00:01 UTC`: to the second, as people read times (the `datetime` of ``time(_:)`` and `export`
    /// keep every microsecond).
    static func readable(_ time: Timestamp) -> String { short(time) + " UTC" }

    /// ``readable(_:)`` without ` UTC`, for the cells of tables whose caption says the times are in UTC.
    static func short(_ time: Timestamp) -> String {
        let text = time.description
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(8))
    }

    /// The time of day alone, `09:00:01`, for rows under a row that names the day.
    static func clock(_ time: Timestamp) -> String { String(time.description.dropFirst(11).prefix(8)) }

    /// The day alone, `2026-11-20`, for axis labels.
    static func day(_ time: Timestamp) -> String { String(time.description.prefix(10)) }

    /// The time of day alone, `09:00`, for axis labels.
    static func minute(_ time: Timestamp) -> String {
        let text = time.description
        let start = text.index(text.startIndex, offsetBy: 11)
        return String(text[start..<text.index(start, offsetBy: 5)])
    }
}
