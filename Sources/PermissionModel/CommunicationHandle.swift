#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

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
        /// A phone number.
        case phoneNumber
        /// An email address.
        case emailAddress
        /// A handle of the app's own (a user name, say).
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

    /// A handle whose value is already normalized, as stored records hold it. Not validated: for
    /// decoders of data this package wrote, which check integrity by other means (the hash chain).
    package init(normalizedValue value: String, kind: Kind) {
        self.value = value
        self.kind = kind
    }

    /// Two handles are the same person when their kinds and normalized values are equal, byte for byte
    /// (not by Unicode canonical equivalence, which `String` uses: storage keys compare bytes too).
    public static func == (lhs: CommunicationHandle, rhs: CommunicationHandle) -> Bool {
        lhs.kind == rhs.kind && compareUTF8(lhs.value, rhs.value) == 0
    }

    /// Hashes the kind and the bytes of the value, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        var copy = value
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Handles order by kind, then by value, both by Unicode code point.
    public static func < (lhs: CommunicationHandle, rhs: CommunicationHandle) -> Bool {
        if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
        return compareUTF8(lhs.value, rhs.value) < 0
    }

    static func normalize(_ raw: String, kind: Kind) throws(PermissionModelError) -> String {
        switch kind {
        case .phoneNumber:
            // Byte loop: this runs for every handle of every replayed event.
            var digits = 0
            var stripped = false
            var valid = true
            var seenContent = false
            for byte in raw.utf8 {
                switch byte {
                case 0x20, 0x2D, 0x2E, 0x28, 0x29: stripped = true
                case 0x2B where !seenContent: seenContent = true
                case 0x30...0x39: digits += 1; seenContent = true
                default: valid = false
                }
                if !valid { break }
            }
            guard valid, (3...20).contains(digits) else {
                throw PermissionModelError(
                    "is not a phone number: \(Self.phoneNumberProblem(raw, digits: valid ? digits : nil)); expected an optional + then 3 to 20 digits (spaces, -, ., ( and ) are ignored)",
                    field: "value")
            }
            guard stripped else { return raw }
            return String(decoding: raw.utf8.filter { !$0.isPhoneSeparator }, as: UTF8.self)
        case .emailAddress:
            var ats = 0
            var asciiLower = true
            for byte in raw.utf8 {
                if byte == 0x40 { ats += 1 }
                if byte >= 0x80 || (byte >= 0x41 && byte <= 0x5A) || byte <= 0x20 || byte == 0x7F { asciiLower = false }
            }
            let trimmed = asciiLower ? raw : raw.trimmingWhitespace()
            if !asciiLower, let scalar = firstCharacterForbiddenInIdentifiers(trimmed) {
                throw PermissionModelError(
                    "is not an email address: it holds \(scalar.codePoint) (\(scalar.categoryPhrase)); an email address may not hold control, format or separator characters",
                    field: "value")
            }
            let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
            let problem: String? =
                if ats != 1 { ats == 0 ? "it has no @" : "it has \(ats) @ signs" }
                else if parts[0].isEmpty { "it has nothing before the @" }
                else if parts[1].isEmpty { "it has nothing after the @" }
                else if !asciiLower && trimmed.unicodeScalars.contains(where: { $0.properties.isWhitespace }) { "it holds white space" }
                else { nil }
            if let problem {
                throw PermissionModelError(
                    "is not an email address: \(problem); expected exactly one @ with text on both sides and no white space",
                    field: "value")
            }
            return asciiLower ? raw : trimmed.lowercased()
        case .custom:
            try validateIdentifier(raw, field: "value", maxBytes: 256)
            return raw
        }
    }

    /// What makes `raw` no phone number, without repeating it: `digits` is `nil` when a character is not
    /// allowed, else the number of digits.
    private static func phoneNumberProblem(_ raw: String, digits: Int?) -> String {
        if let digits { return digits == 1 ? "it has 1 digit" : "it has \(digits) digits" }
        if let scalar = firstCharacterForbiddenInIdentifiers(raw) {
            return "it holds \(scalar.codePoint) (\(scalar.categoryPhrase))"
        }
        return "it holds a character that is not a digit, a leading + or a separator"
    }
}

private extension UInt8 {
    var isPhoneSeparator: Bool { self == 0x20 || self == 0x2D || self == 0x2E || self == 0x28 || self == 0x29 }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let end = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[start...end])
    }
}

/// Compares the UTF-8 bytes of two strings: negative, zero or positive as `a` orders before, equal to or
/// after `b`, byte by byte (so by code point). One `memcmp`: `utf8.lexicographicallyPrecedes` and
/// `utf8.elementsEqual` step through a byte at a time, and queries sort and search handles by value.
package func compareUTF8(_ a: String, _ b: String) -> Int {
    var a = a, b = b
    return a.withUTF8 { x in b.withUTF8 { y in compareBytes(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
}

/// How `x` sorts against `y`, byte by byte, a prefix first: negative, zero or positive.
package func compareBytes(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int {
    let common = Swift.min(x.count, y.count)
    if common > 0, let p = x.baseAddress, let q = y.baseAddress {
        let order = memcmp(p, q, common)
        if order != 0 { return order < 0 ? -1 : 1 }
    }
    return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
}

// MARK: Constructors by kind

extension CommunicationHandle {
    /// A validated `custom` handle: `try .custom("dragonslayer42")`.
    public static func custom(_ value: String) throws(PermissionModelError) -> CommunicationHandle {
        try CommunicationHandle(value: value, kind: .custom)
    }

    /// A validated, normalized `phoneNumber` handle: `try .phoneNumber("+1 (555) 010-0101")`.
    public static func phoneNumber(_ value: String) throws(PermissionModelError) -> CommunicationHandle {
        try CommunicationHandle(value: value, kind: .phoneNumber)
    }

    /// A validated, normalized `emailAddress` handle: `try .emailAddress("Aunt.Jo@example.net")`.
    public static func emailAddress(_ value: String) throws(PermissionModelError) -> CommunicationHandle {
        try CommunicationHandle(value: value, kind: .emailAddress)
    }
}
