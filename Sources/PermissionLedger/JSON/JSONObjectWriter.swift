import PermissionModel

/// A one-line JSON object built a member at a time with the ledger's canonical writer (``JSONWriter``), its
/// strings escaped as every JSON of the ledger is (docs/spec/CLI.md, "Common"): how the command-line tool
/// writes the shapes of its commands' output without escaping anything itself.
package struct JSONObjectWriter {
    private var writer = JSONWriter(capacity: 128)
    private var isEmpty = true

    package init() { writer.raw("{") }

    /// `"name":` preceded by a comma unless it is the first member.
    private mutating func key(_ name: String) {
        if !isEmpty { writer.raw(",") }
        isEmpty = false
        writer.string(name)
        writer.raw(":")
    }

    /// A string member, `null` when `value` is `nil`.
    package mutating func string(_ name: String, _ value: String?) {
        key(name)
        writer.optionalString(value)
    }

    /// A number member, `null` when `value` is `nil`.
    package mutating func integer<I: BinaryInteger>(_ name: String, _ value: I?) {
        key(name)
        if let value { writer.integer(value) } else { writer.raw("null") }
    }

    /// A `true` or `false` member.
    package mutating func bool(_ name: String, _ value: Bool) {
        key(name)
        writer.bool(value)
    }

    /// A member whose value is JSON text already written by this module (such as ``QueryJSON/asOf(_:)``).
    package mutating func json(_ name: String, _ text: String) {
        key(name)
        writer.raw(text)
    }

    /// The object's text, closed.
    package var text: String { writer.text + "}" }

    /// `text` as a JSON string literal, escaped as ``string(_:_:)`` escapes a member.
    package static func string(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 2)
        writer.string(text)
        return writer.text
    }
}
