/// A value quoted for an error message, as the tool quotes it: in double quotes, with `"`, `\` and control
/// characters escaped, and shortened with `…` past `limit` characters.
func quoted(_ value: String, limit: Int = 80) -> String {
    var escaped = ""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case _ where [.control, .format, .lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory):
            escaped += "\\u{\(String(scalar.value, radix: 16))}"
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    if escaped.count > limit { escaped = String(escaped.prefix(limit - 1)) + "…" }
    return "\"" + escaped + "\""
}
