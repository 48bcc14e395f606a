import Foundation
import PermissionModel

/// The point of the log a query answers for: the events up to `seq`, evaluated at the clock `time`.
public struct AsOfPoint: Hashable, Sendable {
    /// The last event included (0 for none).
    public var seq: UInt64
    /// The evaluation clock: questions expire and grants lapse by it.
    public var time: Timestamp
}

/// Which point of the log a query is asked as of. See "As of" in docs/spec/EVENTS.md.
public enum AsOf: Hashable, Sendable, CustomStringConvertible {
    /// All events; the clock is now.
    case now
    /// The events with `seq` at most N; the clock is the `recordedAt` of event N.
    case seq(UInt64)
    /// The events with `recordedAt` at most T; the clock is T.
    case time(Timestamp)

    /// The largest `seq` a point may name: `Int64.max`. No ledger comes near it (at a million events a second
    /// it takes 292,000 years), and past it a seq is no longer an integer that every JSON reader of 64-bit
    /// signed integers (Java, Go, SQLite) reads back.
    public static let largestSeq = UInt64(Int64.max)

    /// Parses `seq:N` (N a whole number up to ``largestSeq``) or an RFC 3339 time.
    public init(parsing text: String) throws(PermissionModelError) {
        if text.hasPrefix("seq:") {
            let digits = text.utf8.dropFirst(4)
            guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw PermissionModelError("\(quoted(text)) is not a point of the log: expected seq:N with N a whole number, or an RFC 3339 time")
            }
            guard let n = UInt64(text.dropFirst(4)), n <= Self.largestSeq else {
                throw PermissionModelError("\(text) is beyond any seq a ledger can hold (at most \(Self.largestSeq))")
            }
            self = .seq(n)
        } else {
            do {
                self = .time(try Timestamp(rfc3339: text))
            } catch {
                throw PermissionModelError("\(error.reason); or give seq:N for a point of the log")
            }
        }
    }

    /// `now`, `seq:N`, or the time in RFC 3339 (UTC); the last two are what ``init(parsing:)`` reads.
    public var description: String {
        switch self {
        case .now: "now"
        case .seq(let n): "seq:\(n)"
        case .time(let t): t.description
        }
    }
}
