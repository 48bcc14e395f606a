import Foundation
import Hummingbird
import PermissionLedger
import PermissionModel

/// The query string and path parameters of a request, parsed as the tool parses its options: a value that
/// does not parse is a 400 with a plain reason, as a wrong option is the tool's exit 2.
struct QueryParameters {
    private let query: [String: String]

    /// Reads the query string, refusing a parameter the route does not take (a typo such as `asof` would
    /// otherwise be ignored and answer a different question) or one given twice.
    init(_ request: Request, allowed: Set<String>) throws(APIError) {
        var query: [String: String] = [:]
        for (key, value) in request.uri.queryParameters {
            let name = String(key)
            guard allowed.contains(name) else {
                let accepted = allowed.isEmpty ? "none" : allowed.sorted().joined(separator: ", ")
                throw .badRequest("unknown parameter \(quoted(name)); this route takes: \(accepted)")
            }
            guard query[name] == nil else { throw .badRequest("\(name): given more than once") }
            query[name] = String(value)
        }
        self.query = query
    }

    /// The text of parameter `name`, or nil when it is not given.
    func text(_ name: String) -> String? { query[name] }

    /// `as-of` (or another point parameter): nil when absent or `now`.
    func point(_ name: String = "as-of") throws(APIError) -> AsOf? {
        try query[name].flatMap { text throws(APIError) in text == "now" ? nil : try Self.point(text, name: name) }
    }

    /// A seq parameter (`after`): a whole number from 0 to `AsOf.largestSeq`.
    func seq(_ name: String) throws(APIError) -> UInt64? {
        try query[name].map { text throws(APIError) in try Self.seq(text, name: name) }
    }

    /// A parameter that must be one of an enumeration's names.
    func choice<E: RawRepresentable & CaseIterable>(_ name: String, as _: E.Type = E.self) throws(APIError) -> E? where E.RawValue == String {
        guard let text = query[name] else { return nil }
        guard let value = E(rawValue: text) else {
            throw .badRequest("\(name): \(quoted(text)) is not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// Parses a point as the tool's `--as-of` does: `seq:N`, or an RFC 3339 time (the library's `AsOf(parsing:)`).
    static func point(_ text: String, name: String) throws(APIError) -> AsOf {
        do {
            return try AsOf(parsing: text)
        } catch {
            throw .badRequest("\(name): \(error.reason)")
        }
    }

    /// Parses a question id or its abbreviation, as the tool does.
    static func question(_ text: String) throws(APIError) -> QuestionReference {
        do {
            return try QuestionReference(parsing: text)
        } catch {
            throw .badRequest(error.reason)
        }
    }

    /// Parses a whole number from 0 to `AsOf.largestSeq`.
    static func seq(_ text: String, name: String) throws(APIError) -> UInt64 {
        let shown = text
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .badRequest("\(name): \(quoted(shown)) is not a seq: expected a whole number")
        }
        guard let seq = UInt64(text), seq <= AsOf.largestSeq else {
            throw .badRequest("\(name): \(shown) is beyond any seq a ledger can hold (at most \(AsOf.largestSeq))")
        }
        return seq
    }
}

extension RequestContext {
    /// Path parameter `name`, percent-decoded (a subject may hold any character but controls).
    func pathParameter(_ name: String) throws(APIError) -> String {
        guard let raw = parameters.get(name), let decoded = raw.removingPercentEncoding else {
            throw .badRequest("\(name): not a percent-encoded path segment")
        }
        return decoded
    }
}
