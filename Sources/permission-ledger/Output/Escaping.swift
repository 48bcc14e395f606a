import PermissionModel

/// Several values in one table or CSV cell, unambiguously: joined with `; `, a `;`, `|` or `\` inside a value
/// preceded by a backslash (`a\; b` is one value, `a; b` two; an unescaped `|` may separate labelled lists).
/// The cell is then ``displayed(_:)`` as any other.
func listCell(_ values: [String]) -> String {
    values.map { value in
        var escaped = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if scalar == ";" || scalar == "|" || scalar == "\\" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return String(escaped)
    }.joined(separator: "; ")
}

/// How many terminal columns a displayed value takes: two for an East Asian wide or fullwidth character or
/// an emoji shown as such, one for any other character (a combining mark joins the character before it).
func columns(_ text: String) -> Int {
    // Printable ASCII, most values: a column a byte.
    if isPrintableASCII(text) { return text.utf8.count }
    var total = 0
    for character in text {
        guard let first = character.unicodeScalars.first else { continue }
        total += isWide(first) || character.unicodeScalars.contains(where: \.properties.isEmojiPresentation) ? 2 : 1
    }
    return total
}

private func isWide(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
         0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
         0x20000...0x2FFFD, 0x30000...0x3FFFD:
        true
    default:
        false
    }
}
