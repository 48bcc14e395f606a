import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

/// Wraps text at spaces to lines of at most `width` characters, continuing with `indent`; ends with a newline.
/// Leading spaces are kept; a word longer than a line is cut with an ellipsis.
func wrap(_ text: String, indent: String, width: Int = 80) -> String {
    func fit(_ line: String) -> String { line.count > width ? String(line.prefix(width - 1)) + "…" : line }
    let lead = String(text.prefix { $0 == " " })
    var lines: [String] = []
    var line = lead
    var hasWord = false
    for word in text.dropFirst(lead.count).split(separator: " ") {
        let candidate = hasWord ? line + " " + word : line + word
        if candidate.count <= width || !hasWord {
            line = fit(candidate)
        } else {
            lines.append(line)
            line = fit(indent + word)
        }
        hasWord = true
    }
    lines.append(line)
    return lines.joined(separator: "\n") + "\n"
}
