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
package func quoted(_ value: String, limit: Int = 80) -> String {
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

/// Checks the byte length and absence of C0 and C1 control characters that ids and subjects have always met.
/// Events replayed from the log are held to this; events appended from now on meet `validateIdentifier`, which also refuses format and separator characters.
package func validateText(_ value: String, field: @autoclosure () -> String, maxBytes: Int) throws(PermissionModelError) {
    let count = value.utf8.count
    guard count >= 1 else { throw PermissionModelError("must not be empty", field: field()) }
    guard count <= maxBytes else {
        throw PermissionModelError("is \(count) bytes long; at most \(maxBytes) are allowed", field: field())
    }
    if value.utf8.containsControlCharacter {
        throw PermissionModelError("contains a control character", field: field())
    }
}

/// Checks an identifier as docs/spec/EVENTS.md "Text" asks of new events: an event's `id` and `subject`, a `custom`
/// handle's value, a choice's id, an erasure's reference. 1 to `maxBytes` bytes, and no character of Unicode's
/// general categories Cc, Cf, Zl and Zp, so that two identifiers that look alike on a screen are alike in bytes.
///
/// The message names the offending character by its code point, never the value: some identifiers are personal.
package func validateIdentifier(_ value: String, field: @autoclosure () -> String, maxBytes: Int = .max) throws(PermissionModelError) {
    let count = value.utf8.count
    guard count >= 1 else { throw PermissionModelError("must not be empty", field: field()) }
    guard count <= maxBytes else {
        throw PermissionModelError("is \(count) bytes long; at most \(maxBytes) are allowed", field: field())
    }
    if let scalar = firstCharacterForbiddenInIdentifiers(value) {
        throw PermissionModelError(
            "holds \(scalar.codePoint) (\(scalar.categoryPhrase)); identifiers may not hold control, format or separator characters",
            field: field())
    }
}

/// Checks free text as docs/spec/EVENTS.md "Text" asks of new events (names, choice titles, a description, an error's
/// message): any character but C0 controls other than tab and line feed, DEL and C1 controls.
///
/// The message names the offending character by its code point, never the text: free text is personal.
package func validateFreeText(_ value: String, field: @autoclosure () -> String) throws(PermissionModelError) {
    if let scalar = firstCharacterForbiddenInFreeText(value) {
        throw PermissionModelError(
            "holds \(scalar.codePoint) (\(scalar.categoryPhrase)); text may not hold control characters other than tab and line feed",
            field: field())
    }
}

/// The first character of `value` of the general categories Cc, Cf, Zl or Zp, if any.
package func firstCharacterForbiddenInIdentifiers(_ value: String) -> Unicode.Scalar? {
    // ASCII text, by far the most common, needs no decoding: its only such characters are C0 controls and DEL.
    let ascii = value.utf8.withContiguousStorageIfAvailable { bytes in
        bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
    if ascii == true { return nil }
    return value.unicodeScalars.first { $0.isForbiddenInIdentifiers }
}

/// The first C0 control other than tab and line feed, DEL or C1 control in `value`, if any.
package func firstCharacterForbiddenInFreeText(_ value: String) -> Unicode.Scalar? {
    // By a byte scan first: every such character is one byte, or two (C2 80 to C2 9F).
    let clean = value.utf8.withContiguousStorageIfAvailable { bytes in
        var previous: UInt8 = 0
        for byte in bytes {
            if (byte < 0x20 && byte != 0x09 && byte != 0x0A) || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) {
                return false
            }
            previous = byte
        }
        return true
    }
    if clean == true { return nil }
    return value.unicodeScalars.first { $0.isForbiddenInFreeText }
}

extension Unicode.Scalar {
    var isControl: Bool { value < 0x20 || (value >= 0x7F && value <= 0x9F) }

    /// Of Unicode's general categories Cc, Cf, Zl or Zp: what identifiers may not hold, and what the tool shows
    /// escaped.
    package var isForbiddenInIdentifiers: Bool {
        if value < 0x7F { return value < 0x20 }
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// A C0 control other than tab and line feed, DEL or a C1 control: what free text may not hold.
    var isForbiddenInFreeText: Bool { isControl && value != 0x09 && value != 0x0A }

    /// `U+200B`: the scalar's code point as messages name it, at least four uppercase hex digits.
    package var codePoint: String { "U+" + hexDigits }

    /// The scalar's code point in uppercase hex, at least four digits: `200B`, `001B`, `E0001`.
    package var hexDigits: String {
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// What kind of character the scalar is, for a message: `a format character`.
    var categoryPhrase: String {
        switch properties.generalCategory {
        case .control: "a control character"
        case .format: "a format character"
        case .lineSeparator: "a line separator"
        case .paragraphSeparator: "a paragraph separator"
        default: "a character that is not allowed here"
        }
    }
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
