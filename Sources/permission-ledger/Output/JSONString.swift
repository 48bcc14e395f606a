import Foundation

/// A string as a JSON string literal, escaped as the ledger's JSON is (docs/spec/CLI.md, "Common"): quotes and
/// backslashes, every control character, U+2028 and U+2029 (`\n`, `\r`, `\t`, else `\u00XX`), so that a
/// record stays one line for any reader.
func jsonString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}":
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
