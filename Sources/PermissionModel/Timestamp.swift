import Foundation

/// A point in time at microsecond precision, as the ledger keeps every time.
///
/// Times cross the ledger's boundary as RFC 3339 text with a `Z` or a numeric
/// offset and up to six fractional digits; they are always written back in UTC,
/// as `YYYY-MM-DDTHH:MM:SSZ`, or with six fractional digits when the fraction
/// is not zero.
///
/// ```swift
/// let t = try Timestamp(rfc3339: "2026-11-20T10:00:00.250+01:00")
/// print(t)  // 2026-11-20T09:00:00.250000Z
/// ```
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microseconds: Int64

    /// Creates a timestamp from microseconds since the Unix epoch.
    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// Creates a timestamp from a `Date`, rounded to the nearest microsecond.
    public init(_ date: Date) {
        self.microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// The same instant as a `Date`.
    public var date: Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// The earliest time the ledger represents: 0000-01-01T00:00:00Z.
    public static let earliest = Timestamp(microseconds: -62_167_219_200_000_000)
    /// The latest time the ledger represents: 9999-12-31T23:59:59.999999Z.
    public static let latest = Timestamp(microseconds: 253_402_300_799_999_999)

    /// The time a number of whole seconds later, no later than ``latest`` (a grant of ten thousand
    /// years lapses at the end of year 9999).
    public func adding(seconds: Int64) -> Timestamp {
        let (product, overflowA) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, overflowB) = microseconds.addingReportingOverflow(product)
        guard !overflowA, !overflowB else { return seconds > 0 ? .latest : .earliest }
        return Timestamp(microseconds: min(max(sum, Self.earliest.microseconds), Self.latest.microseconds))
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microseconds < rhs.microseconds
    }

    /// Parses an RFC 3339 time.
    ///
    /// - Throws: ``PermissionModelError`` saying what part of the text is wrong.
    public init(rfc3339 text: String) throws(PermissionModelError) {
        self = try RFC3339.parse(Array(text.utf8), text: text)
    }

    /// The canonical UTC form: `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    public var description: String { RFC3339.format(self) }

    /// Appends ``description``'s bytes (ASCII) to `bytes`, without making a string.
    package func appendRFC3339(to bytes: inout [UInt8]) { RFC3339.append(self, to: &bytes) }
}

enum RFC3339 {
    static let microsPerDay: Int64 = 86_400_000_000

    static func parse(_ b: [UInt8], text: String) throws(PermissionModelError) -> Timestamp {
        func fail(_ why: String) -> PermissionModelError {
            PermissionModelError("\(quoted(text)) is not an RFC 3339 time (\(why)); expected for example 2026-11-20T09:00:00Z")
        }
        var i = 0
        func digits(_ n: Int) throws(PermissionModelError) -> Int64 {
            guard i + n <= b.count else { throw fail("it ends too early") }
            var v: Int64 = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { throw fail("expected a digit at position \(i + k + 1)") }
                v = v * 10 + Int64(c - 48)
            }
            i += n
            return v
        }
        func expect(_ chars: [UInt8], _ what: String) throws(PermissionModelError) {
            guard i < b.count, chars.contains(b[i]) else { throw fail("expected \(what) at position \(i + 1)") }
            i += 1
        }
        let year = try digits(4)
        try expect([45], "'-'")
        let month = try digits(2)
        try expect([45], "'-'")
        let day = try digits(2)
        try expect([84, 116], "'T'")
        let hour = try digits(2)
        try expect([58], "':'")
        let minute = try digits(2)
        try expect([58], "':'")
        let second = try digits(2)
        var fraction: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var count = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                count += 1
                guard count <= 6 else { throw fail("more than 6 fractional digits") }
                fraction = fraction * 10 + Int64(b[i] - 48)
                i += 1
            }
            guard count > 0 else { throw fail("no digit after '.'") }
            for _ in count..<6 { fraction *= 10 }
        }
        guard i < b.count else { throw fail("no time zone: add Z or an offset such as +01:00") }
        var offsetMinutes: Int64 = 0
        switch b[i] {
        case 90, 122: i += 1
        case 43, 45:
            let sign: Int64 = b[i] == 45 ? -1 : 1
            i += 1
            let oh = try digits(2)
            try expect([58], "':' in the offset")
            let om = try digits(2)
            guard oh <= 23, om <= 59 else { throw fail("offset out of range") }
            offsetMinutes = sign * (oh * 60 + om)
        default:
            throw fail("no time zone: add Z or an offset such as +01:00")
        }
        guard i == b.count else { throw fail("unexpected text after the time zone") }
        guard (1...12).contains(month) else { throw fail("month \(month) out of range") }
        guard day >= 1, day <= daysIn(month: month, year: year) else { throw fail("day \(day) out of range") }
        guard hour <= 23 else { throw fail("hour out of range") }
        guard minute <= 59 else { throw fail("minute out of range") }
        guard second <= 59 else { throw fail("second out of range") }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
        let result = Timestamp(microseconds: seconds * 1_000_000 + fraction)
        guard result >= .earliest, result <= .latest else { throw fail("in UTC it falls outside the years 0000 to 9999") }
        return result
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func format(_ time: Timestamp) -> String {
        var out = [UInt8]()
        out.reserveCapacity(27)
        append(time, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the canonical form of `time` (``format(_:)``) to `out`, as ASCII.
    static func append(_ time: Timestamp, to out: inout [UInt8]) {
        // Every time the ledger makes is in range; clamping keeps a damaged value from printing garbage.
        let t = Timestamp(microseconds: min(max(time.microseconds, Timestamp.earliest.microseconds), Timestamp.latest.microseconds))
        var days = t.microseconds / microsPerDay
        var rest = t.microseconds % microsPerDay
        if rest < 0 { rest += microsPerDay; days -= 1 }
        let (y, m, d) = civilFromDays(days)
        let secs = rest / 1_000_000
        let fraction = rest % 1_000_000
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 27) { text in
            var count = 0
            func put(_ v: Int64, _ width: Int) {
                var x = v
                for k in stride(from: count + width - 1, through: count, by: -1) { text[k] = UInt8(48 + x % 10); x /= 10 }
                count += width
            }
            func put(_ byte: UInt8) {
                text[count] = byte
                count += 1
            }
            put(y, 4); put(45); put(m, 2); put(45); put(d, 2); put(84)
            put(secs / 3600, 2); put(58); put(secs / 60 % 60, 2); put(58); put(secs % 60, 2)
            if fraction != 0 { put(46); put(fraction, 6) }
            put(90)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<count]))
        }
    }
}
