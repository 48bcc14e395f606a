import Foundation
import PermissionModel
import Testing

@Suite struct TimestampTests {
    /// 2026-11-20T09:00:00Z in seconds since the epoch.
    static let nineUTC: Int64 = 1_795_165_200

    @Test func parsesZulu() throws {
        let t = try Timestamp(rfc3339: "2026-11-20T09:00:00Z")
        #expect(t.microseconds == Self.nineUTC * 1_000_000)
        #expect(t.description == "2026-11-20T09:00:00Z")
    }

    @Test(arguments: [
        "2026-11-20T10:00:00+01:00",
        "2026-11-20T03:30:00-05:30",
        "2026-11-20T09:00:00+00:00",
        "2026-11-20T09:00:00-00:00",
        "2026-11-21T08:59:00+23:59",
        "2026-11-20t09:00:00z",
        "2026-11-20t10:00:00+01:00",
    ])
    func offsetsAndLowercaseNameTheSameInstant(text: String) throws {
        let t = try Timestamp(rfc3339: text)
        #expect(t == (try Timestamp(rfc3339: "2026-11-20T09:00:00Z")), "\(text)")
        #expect(t.description == "2026-11-20T09:00:00Z", "written back in UTC")
    }

    @Test(arguments: [
        (".5", Int64(500_000)),
        (".25", 250_000),
        (".125", 125_000),
        (".0625", 62_500),
        (".03125", 31_250),
        (".000001", 1),
        (".123456", 123_456),
        (".000000", 0),
    ])
    func fractionalDigitsOneToSix(fraction: String, micros: Int64) throws {
        let t = try Timestamp(rfc3339: "2026-11-20T09:00:00\(fraction)Z")
        #expect(t.microseconds == Self.nineUTC * 1_000_000 + micros)
    }

    @Test func fractionWithOffset() throws {
        let t = try Timestamp(rfc3339: "2026-11-20T11:20:30.500+01:00")
        #expect(t.description == "2026-11-20T10:20:30.500000Z")
    }

    @Test(arguments: [
        "2026-11-20T09:00:00",               // no zone
        "2026-11-20T09:00:00.1234567Z",      // 7 fractional digits
        "2026-13-20T09:00:00Z",              // month 13
        "2026-00-20T09:00:00Z",              // month 0
        "2026-02-30T09:00:00Z",              // Feb 30
        "2026-02-29T09:00:00Z",              // Feb 29, 2026 is not a leap year
        "1900-02-29T09:00:00Z",              // century, not a leap year
        "2026-04-31T09:00:00Z",              // April has 30 days
        "2026-11-00T09:00:00Z",              // day 0
        "2026-11-20T24:00:00Z",              // hour 24
        "2026-11-20T09:60:00Z",              // minute 60
        "2026-11-20T09:00:60Z",              // second 60
        "2026-11-20T09:00:00Zjunk",          // trailing text
        "2026-11-20T09:00:00+01:00 ",        // trailing space
        "2026-11-20T09:00:00Z\n",            // trailing newline
        "2026-11-20T09:00:00.Z",             // no digit after '.'
        "2026-11-20T09:00:00+0100",          // offset without ':'
        "2026-11-20T09:00:00+24:00",         // offset out of range
        "2026-11-20 09:00:00Z",              // space instead of T
        "26-11-20T09:00:00Z",                // two-digit year
        "2026-11-20",                        // date only
        "",
    ])
    func rejects(text: String) {
        #expect(throws: PermissionModelError.self, "\(quoted(text)) should be rejected") {
            try Timestamp(rfc3339: text)
        }
    }

    @Test(arguments: ["2024-02-29T12:00:00Z", "2000-02-29T12:00:00Z", "2026-12-31T23:59:59Z", "2026-04-30T00:00:00Z"])
    func acceptsValidCalendarEdges(text: String) throws {
        #expect(try Timestamp(rfc3339: text).description == text)
    }

    @Test func rejectionSaysWhatIsWrong() throws {
        let error = #expect(throws: PermissionModelError.self) { try Timestamp(rfc3339: "2026-11-20T09:00:00") }
        #expect(error?.description.contains("zone") == true, "\(String(describing: error))")
    }

    @Test func formatsWholeSecondsWithoutFraction() {
        #expect(Timestamp(microseconds: Self.nineUTC * 1_000_000).description == "2026-11-20T09:00:00Z")
        #expect(Timestamp(microseconds: 0).description == "1970-01-01T00:00:00Z")
    }

    @Test func formatsNonZeroFractionWithSixDigits() {
        #expect(Timestamp(microseconds: Self.nineUTC * 1_000_000 + 250_000).description == "2026-11-20T09:00:00.250000Z")
        #expect(Timestamp(microseconds: Self.nineUTC * 1_000_000 + 1).description == "2026-11-20T09:00:00.000001Z")
        #expect(Timestamp(microseconds: Self.nineUTC * 1_000_000 + 999_999).description == "2026-11-20T09:00:00.999999Z")
    }

    static let epochCases: [(String, Int64)] = [
        ("1969-12-31T23:59:59Z", -1_000_000),
        ("1969-12-31T23:59:59.500000Z", -500_000),
        ("1969-12-31T23:59:59.999999Z", -1),
        ("1900-01-01T00:00:00Z", -2_208_988_800_000_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000_000),
        ("1970-01-01T00:00:00.000001Z", 1),
        ("9999-12-31T23:59:59Z", 253_402_300_799_000_000),
    ]

    @Test(arguments: epochCases)
    func roundTripsAcrossTheEpoch(text: String, micros: Int64) throws {
        let t = try Timestamp(rfc3339: text)
        #expect(t.microseconds == micros)
        #expect(t.description == text)
        #expect(try Timestamp(rfc3339: t.description) == t)
    }

    @Test func pre1970WithOffsetIsWrittenInUTC() throws {
        let t = try Timestamp(rfc3339: "1969-12-31T20:00:00.25-05:00")
        #expect(t.description == "1970-01-01T01:00:00.250000Z")
        let u = try Timestamp(rfc3339: "1970-01-01T00:30:00+01:00")
        #expect(u.description == "1969-12-31T23:30:00Z")
        #expect(u.microseconds == -1_800 * 1_000_000)
    }

    @Test func ordersAsInstantsAndAddsSeconds() throws {
        let a = try Timestamp(rfc3339: "2026-11-20T10:00:00+01:00")
        let b = try Timestamp(rfc3339: "2026-11-20T09:00:00.000001Z")
        #expect(a < b)
        #expect(a.adding(seconds: 3600).description == "2026-11-20T10:00:00Z")
        #expect(Timestamp(microseconds: .max - 5).adding(seconds: 10) == .latest, "saturates rather than trapping")
        #expect(a.adding(seconds: .max) == .latest)
        #expect(Timestamp.latest.description == "9999-12-31T23:59:59.999999Z")
        #expect(Timestamp.earliest.description == "0000-01-01T00:00:00Z")
    }

    @Test func dateConversionKeepsMicroseconds() throws {
        let t = try Timestamp(rfc3339: "2026-11-20T09:00:00.123456Z")
        #expect(Timestamp(t.date) == t)
    }

    /// A time whose UTC form falls outside years 0000–9999 cannot be written back as `YYYY-…Z`:
    /// it must be rejected (or, at the least, written so that it reads back as the same instant).
    @Test(arguments: ["9999-12-31T23:59:59-01:00", "9999-12-31T23:30:00.5-00:45", "0000-01-01T00:00:00+01:00", "0000-01-01T00:59:59+01:00"])
    func timesOutsideYears0000To9999AreRejected(text: String) throws {
        guard let t = try? Timestamp(rfc3339: text) else { return }  // rejected, as it should be
        // Accepted: then it has to be written back in the fixed form, as the same instant.
        let written = t.description
        #expect(Self.isCanonicalForm(written), "\(text) was written back as \(written)")
        #expect((try? Timestamp(rfc3339: written))?.microseconds == t.microseconds, "\(text) was written back as \(written)")
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    static func isCanonicalForm(_ text: String) -> Bool {
        let pattern = Array("dddd-dd-ddTdd:dd:dd")
        let chars = Array(text)
        guard chars.count == 20 || chars.count == 27, chars.last == "Z" else { return false }
        for (c, p) in zip(chars, pattern) where p == "d" ? !c.isASCII || !c.isNumber : c != p { return false }
        if chars.count == 27 { return chars[19] == "." && chars[20..<26].allSatisfy { $0.isASCII && $0.isNumber } }
        return true
    }

    @Test func theFirstAndLastWritableInstantsRoundTrip() throws {
        for text in ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "0000-01-01T01:00:00+01:00", "9999-12-31T22:59:59-01:00"] {
            let t = try Timestamp(rfc3339: text)
            #expect(try Timestamp(rfc3339: t.description) == t, "\(text)")
            #expect(Self.isCanonicalForm(t.description))
        }
        #expect(Self.isCanonicalForm("2026-11-20T09:00:00Z"))
        #expect(Self.isCanonicalForm("2026-11-20T09:00:00.250000Z"))
        #expect(!Self.isCanonicalForm("000/-12-31T23:00:00Z"))
    }
}
