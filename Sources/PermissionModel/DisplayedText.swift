/// A value as tables, CSV and error messages show it (docs/spec/CLI.md, "Common": values are data, never
/// instructions to whatever shows them).
///
/// Every character of Unicode's general categories Cc, Cf, Zl and Zp (terminal escape sequences, newlines,
/// tabs, bidi controls, zero-width characters, byte order marks) is written as `\u{XXXX}`: its code point in
/// uppercase hex, at least four digits (`\u{001B}`, `\u{000A}`, `\u{202E}`, `\u{E0001}`). A zero-width joiner
/// (U+200D) stays when it joins two characters that are neither ASCII nor escaped, as it does inside an emoji
/// sequence or a name in an Indic or Arabic script; between ASCII characters it would only hide a difference,
/// so it is escaped there. Everything else, a backslash included, is shown as it is.
package func displayed(_ value: String) -> String {
    // Most values are printable ASCII: nothing to do.
    if isPrintableASCII(value) { return value }
    let scalars = Array(value.unicodeScalars)
    var shown = String.UnicodeScalarView()
    for (i, scalar) in scalars.enumerated() {
        if isEscaped(scalar), !(scalar == "\u{200D}" && joins(scalars, at: i)) {
            shown.append(contentsOf: escape(scalar).unicodeScalars)
        } else {
            shown.append(scalar)
        }
    }
    return String(shown)
}

/// Whether `text` is printable ASCII only (U+0020 to U+007E), as most values are: shown as it is, a column a byte.
package func isPrintableASCII(_ text: String) -> Bool {
    var text = text
    // One pass over contiguous bytes: tables check every cell of up to millions of rows.
    return text.withUTF8 { bytes in
        for byte in bytes where byte < 0x20 || byte >= 0x7F { return false }
        return true
    }
}

/// Whether ``displayed(_:)`` writes the character as an escape (a zero-width joiner aside): the characters
/// identifiers may not hold (Cc, Cf, Zl, Zp).
package func isEscaped(_ scalar: Unicode.Scalar) -> Bool { scalar.isForbiddenInIdentifiers }

/// `\u{XXXX}`: the code point in uppercase hex, at least four digits.
package func escape(_ scalar: Unicode.Scalar) -> String { "\\u{" + scalar.hexDigits + "}" }

/// Whether the zero-width joiner at `index` sits between two characters that are neither ASCII nor escaped.
private func joins(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
    guard index > 0, index + 1 < scalars.count else { return false }
    let before = scalars[index - 1], after = scalars[index + 1]
    return !before.isASCII && !after.isASCII && !isEscaped(before) && !isEscaped(after)
}
