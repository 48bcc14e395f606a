/// A way to reach a person: a phone number, an email address or an app's own handle.
///
/// Mirrors PermissionKit's `CommunicationHandle`. The value is validated and
/// normalized when the handle is made, so two handles are the same person exactly
/// when they compare equal:
///
/// | kind | normalized |
/// |---|---|
/// | ``Kind/phoneNumber`` | spaces, `-`, `.`, `(` and `)` removed; an optional `+` then 3 to 20 digits |
/// | ``Kind/emailAddress`` | trimmed and lowercased; exactly one `@` |
/// | ``Kind/custom`` | unchanged, case-sensitive; 1 to 256 bytes, no control characters |
///
/// ```swift
/// let h = try CommunicationHandle(value: "+1 (555) 010-9999", kind: .phoneNumber)
/// h.value  // "+15550109999"
/// ```
public struct CommunicationHandle: Hashable, Sendable, Comparable {
    /// The kind of a handle. The corresponding PermissionKit type is `CommunicationHandle.Kind`.
    public enum Kind: String, Hashable, Sendable, CaseIterable, Comparable {
        case phoneNumber
        case emailAddress
        case custom

        /// Kinds order by their names, compared by code point: `custom` < `emailAddress` < `phoneNumber`.
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The normalized value.
    public let value: String
    /// The kind of handle.
    public let kind: Kind

    /// Validates and normalizes a handle.
    ///
    /// - Throws: ``PermissionModelError`` with field `value` when the value is not valid for its kind.
    public init(value: String, kind: Kind) throws(PermissionModelError) {
        self.kind = kind
        self.value = try Self.normalize(value, kind: kind)
    }

    /// Handles order by kind, then by value, both by Unicode code point.
    public static func < (lhs: CommunicationHandle, rhs: CommunicationHandle) -> Bool {
        if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
        return lhs.value.unicodeScalars.lexicographicallyPrecedes(rhs.value.unicodeScalars)
    }

    static func normalize(_ raw: String, kind: Kind) throws(PermissionModelError) -> String {
        switch kind {
        case .phoneNumber:
            let stripped = raw.unicodeScalars.filter { !" -.()".unicodeScalars.contains($0) }
            var digits = Substring.UnicodeScalarView(stripped)
            if digits.first == "+" { digits.removeFirst() }
            guard (3...20).contains(digits.count), digits.allSatisfy({ $0.value >= 48 && $0.value <= 57 }) else {
                throw PermissionModelError(
                    "\(quoted(raw)) is not a phone number: expected an optional + then 3 to 20 digits (spaces, -, ., ( and ) are ignored)",
                    field: "value")
            }
            return String(String.UnicodeScalarView(stripped))
        case .emailAddress:
            let trimmed = raw.trimmingWhitespace()
            let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                  !trimmed.unicodeScalars.contains(where: { $0.properties.isWhitespace }) else {
                throw PermissionModelError(
                    "\(quoted(raw)) is not an email address: expected exactly one @ with text on both sides and no spaces",
                    field: "value")
            }
            return trimmed.lowercased()
        case .custom:
            try validateText(raw, field: "value", maxBytes: 256)
            return raw
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let end = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[start...end])
    }
}
