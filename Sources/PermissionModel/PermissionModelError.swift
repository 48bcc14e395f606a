/// A value that breaks a rule of PermissionKit's vocabulary or of the ledger's contract.
///
/// `field` names where the problem is, as a path such as `question.choices[1].grantSeconds`,
/// so that a message can point a person at it; `reason` says what is wrong in plain words.
public struct PermissionModelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path of the offending field, or `nil` when the whole value is at fault.
    public var field: String?
    /// What is wrong, in plain words.
    public var reason: String

    /// Creates an error saying what is wrong (`reason`) with `field`, or with the whole value when `field` is `nil`.
    public init(_ reason: String, field: String? = nil) {
        self.reason = reason
        self.field = field
    }

    /// The same error, with its field path placed under `parent`.
    public func nested(in parent: String) -> PermissionModelError {
        guard let field else { return PermissionModelError(reason, field: parent) }
        let joined = field.hasPrefix("[") ? parent + field : parent + "." + field
        return PermissionModelError(reason, field: joined)
    }

    /// `field: reason`, or only the reason when there is no field.
    public var description: String {
        field.map { "\($0): \(reason)" } ?? reason
    }
}

/// Quotes a value for an error message, shortening it when it is long.
public func quoted(_ value: String, limit: Int = 80) -> String {
    var escaped = ""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case _ where scalar.properties.generalCategory == .control:
            escaped += "\\u{\(String(scalar.value, radix: 16))}"
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    if escaped.count > limit { escaped = String(escaped.prefix(limit - 1)) + "…" }
    return "\"" + escaped + "\""
}

/// A name or id taken from the input, as a message shows it: unchanged when it is short, plain text (no
/// control characters, quotes or backslashes), else as ``quoted(_:limit:)`` writes it, so that a message stays
/// one readable line whatever the input holds (a field name with a newline, a terminal escape, 1 MiB of it).
package func shown(_ value: String) -> String {
    let plain = !value.isEmpty && value.unicodeScalars.count <= 64 && value.unicodeScalars.allSatisfy {
        $0 != "\"" && $0 != "\\" && $0.properties.generalCategory != .control
    }
    return plain ? value : quoted(value, limit: 64)
}

/// Names or ids taken from the input, as a message lists them: each ``shown(_:)``, comma-separated, the
/// first 20 and then how many more.
package func shownList(_ values: [String]) -> String {
    let listed = values.prefix(20).map(shown).joined(separator: ", ")
    return values.count > 20 ? listed + ", … (\(values.count - 20) more)" : listed
}

/// Checks the byte length and absence of control characters that the spec asks of ids, subjects and similar text.
public func validateText(_ value: String, field: String, maxBytes: Int) throws(PermissionModelError) {
    let count = value.utf8.count
    guard count >= 1 else { throw PermissionModelError("must not be empty", field: field) }
    guard count <= maxBytes else {
        throw PermissionModelError("is \(count) bytes long; at most \(maxBytes) are allowed", field: field)
    }
    if value.utf8.containsControlCharacter {
        throw PermissionModelError("contains a control character", field: field)
    }
}

extension Unicode.Scalar {
    var isControl: Bool { value < 0x20 || (value >= 0x7F && value <= 0x9F) }
}

extension String.UTF8View {
    /// Whether the text holds a C0 or C1 control character (U+0000–U+001F, U+007F–U+009F), by a byte scan.
    var containsControlCharacter: Bool {
        // Over the string's own bytes when it has them in one piece (a native string does): the view's
        // iterator decodes its position step by step.
        withContiguousStorageIfAvailable(Self.containsControlCharacter) ?? Self.containsControlCharacter(self)
    }

    private static func containsControlCharacter(_ bytes: some Sequence<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for byte in bytes {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { return true }
            previous = byte
        }
        return false
    }
}
