import Foundation
@testable @_spi(StorageEngine) import PermissionLedger
import PermissionModel
import Testing

/// The properties the libFuzzer targets of `Tools/Fuzz` check (its README says how to run them), held here on
/// the fixtures and on hostile inputs so that CI guards them between fuzzing runs; and every input a fuzzing
/// run found, byte for byte.
///
/// - A line given to `EventJSON.decode(line:)` returns or throws an ``EventRejection``, never traps; an event
///   it returns survives its export form (parses again to an equal event whose export is the same bytes) and
///   its stored form (``EventRecord`` decodes it again).
/// - Bytes given to `EventRecord.decode` return or throw an `EventRecord.DecodingError`, never trap; an event
///   they decode to has a canonical encoding that decodes again to an equal event with the same encoding.
@Suite struct FuzzRegressionTests {
    // MARK: Found while fuzzing

    /// A line just under the longest allowed (1 MiB) holding one object of 96,332 distinct fields,
    /// `{"k0":0,"k1":0,…}`. The duplicate-field check compared each field with every earlier one: 4.6
    /// billion comparisons, and this line took 190 s to reject in the fuzz build, 612 s in a debug build.
    /// (libFuzzer's inputs stay under 4 KiB there, so its runs could not meet it: it was found reading the
    /// parser while writing the targets, and confirmed by running `fuzz-event-json` on this input.)
    ///
    /// No clock here (tests are never timed: a loaded 2-core machine must pass them): the line is read to its
    /// real problem, which took minutes with the quadratic check and takes about two seconds now.
    @Test func aWideObjectIsReadToItsRealProblem() throws {
        let line = Self.wideObject(keys: 96_332)
        #expect(line.count == 1_048_543)
        #expect(throws: EventRejection("type: is required but missing")) { try EventJSON.decode(line: line) }
    }

    /// The faster check finds what the old one found: a repeated field, also far into a wide object, also
    /// when the two names are the same text in different Unicode forms (`é` and `e` + U+0301).
    @Test(arguments: [
        (#""k0":1"#, "k0"),
        (#""k2999":1"#, "k2999"),
        (#""\u00e9":1,"e\u0301":2"#, "e\u{301}"),
    ])
    func aRepeatedFieldOfAWideObjectIsFound(extra: String, repeated: String) throws {
        var line = Self.wideObject(keys: 3_000)
        line.removeLast()  // "}"
        line += Array(",\(extra)}".utf8)
        do {
            _ = try EventJSON.decode(line: line)
            Issue.record("the repeated field \(repeated) was not found")
        } catch {
            #expect(error.reason.contains("appears twice in one object"), "\(error)")
            #expect(error.reason.contains(repeated), "\(error)")
        }
    }

    /// `{"k0":0,"k1":0,…}` with `keys` fields.
    static func wideObject(keys: Int) -> [UInt8] {
        var line: [UInt8] = Array("{".utf8)
        for index in 0..<keys {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            line += Array(#""k\#(index)":0"#.utf8)
        }
        line.append(UInt8(ascii: "}"))
        return line
    }

    // MARK: The fixtures, the fuzzers' seeds

    @Test(arguments: Fixtures.valid)
    func everyLineOfAValidFixtureSurvivesItsExportAndStoredForms(name: String) throws {
        var events = 0
        for line in try Fixtures.rawLines(name) where try Self.checkLine(line.bytes) { events += 1 }
        #expect(events > 0)
    }

    @Test(arguments: Fixtures.invalid)
    func everyLineOfAnInvalidFixtureIsRejectedOrSurvivesItsForms(name: String) throws {
        for line in try Fixtures.rawLines(name, invalid: true) { _ = try Self.checkLine(line.bytes) }
    }

    /// The stored record of every event of the fixtures, which decode as they are.
    static func fixtureRecords() throws -> [[UInt8]] {
        try Fixtures.valid.flatMap { name in
            try Fixtures.fixture(name).events.map { EventRecord.encode($0, recordedAt: $0.recordedAt ?? $0.occurredAt) }
        }
    }

    @Test func everyStoredRecordOfTheFixturesDecodesCanonically() throws {
        let records = try Self.fixtureRecords()
        #expect(records.count > 1_000)
        for record in records {
            #expect(try Self.checkRecord(record), "\(record)")
        }
    }

    /// A record cut short, at every length of every record of the fixtures: a `DecodingError`, never a trap
    /// or an event.
    @Test func everyTruncatedRecordThrows() throws {
        for record in try Self.fixtureRecords() {
            for length in 0..<record.count {
                #expect(throws: EventRecord.DecodingError.self, "\(record) cut to \(length) bytes") {
                    try record.prefix(length).withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
                }
            }
        }
    }

    /// One byte changed, at every position of one record of each event type: decodes or throws, never traps;
    /// and what decodes re-encodes canonically. A byte appended: rejected as trailing bytes.
    @Test func everyRecordWithOneByteChangedDecodesOrThrows() throws {
        var types = Set<UInt8>()
        let records = try Self.fixtureRecords().filter { types.insert($0[1]).inserted }
        #expect(types.count == EventType.allCases.count)
        for record in records {
            for position in record.indices {
                for change: UInt8 in [0x01, 0x02, 0x40, 0x80, 0xFF] {
                    var changed = record
                    changed[position] ^= change
                    _ = try Self.checkRecord(changed)
                }
            }
            #expect {
                try (record + [0]).withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
            } throws: { error in
                (error as? EventRecord.DecodingError)?.reason == "1 unexpected trailing bytes"
            }
        }
    }

    // MARK: Hostile lines

    static let event = #"{"type":"permission.changed","id":"e","subject":"s","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"denied""#

    /// Lines a fuzzer reaches for, each with what comes of it: `event`, `blank` (neither an event nor a
    /// rejection), or words of the rejection. None traps.
    static let hostileLines: [(String, [UInt8], outcome: String)] = [
        ("empty", [], "blank"),
        ("a carriage return alone", [0x0D], "blank"),
        ("a NUL byte", [0], "unexpected a NUL byte where a value was expected"),
        ("a byte-order mark before the object", [0xEF, 0xBB, 0xBF] + Array((event + "}").utf8), "unexpected byte 0xEF where a value was expected"),
        ("32 levels of nesting", Array(repeating: UInt8(ascii: "["), count: 32) + Array(repeating: UInt8(ascii: "]"), count: 32), "expected a JSON object, got an array"),
        ("33 levels of nesting", Array(repeating: UInt8(ascii: "["), count: 33) + Array(repeating: UInt8(ascii: "]"), count: 33), "nested deeper than 32 levels"),
        ("100,000 open arrays", Array(repeating: UInt8(ascii: "["), count: 100_000), "nested deeper than 32 levels"),
        ("100,000 open objects", Array(String(repeating: #"{"a":"#, count: 100_000).utf8), "nested deeper than 32 levels"),
        ("a number of 100,000 digits", Array(("[" + String(repeating: "9", count: 100_000) + "]").utf8), "expected a JSON object, got an array"),
        ("an exponent of 20 digits", Array(#"[1e99999999999999999999]"#.utf8), "expected a JSON object, got an array"),
        ("seq one past Int64.max", Array((event + #","seq":9223372036854775808}"#).utf8), "seq: 9223372036854775808 is out of range"),
        ("seq Int64.max", Array((event + #","seq":9223372036854775807}"#).utf8), "event"),
        ("seq -0", Array((event + #","seq":-0}"#).utf8), "seq: must be 1 or more, not 0"),
        ("seq 1.0", Array((event + #","seq":1.0}"#).utf8), "seq: must be a whole number, not 1.0"),
        ("seq 1e0", Array((event + #","seq":1e0}"#).utf8), "seq: must be a whole number, not 1e0"),
        ("a lone high surrogate", Array(#"{"type":"\uD800"}"#.utf8), "unpaired surrogate"),
        ("a lone low surrogate", Array(#"{"type":"\uDC00"}"#.utf8), "unpaired surrogate"),
        ("a high surrogate before a non-surrogate", Array(#"{"type":"\uD800\u0041"}"#.utf8), "unpaired surrogate"),
        ("a surrogate pair", Array((event + #","cause":"\uD83D\uDE00"}"#).utf8), "is not one of"),
        ("a short \\u escape at the end", Array(#"{"type":"\u00"#.utf8), "needs 4 hex digits"),
        ("a backslash at the end", Array(#"{"type":"\"#.utf8), "a string is not closed"),
        ("an overlong NUL in a string", Array(#"{"type":""#.utf8) + [0xC0, 0x80] + Array(#""}"#.utf8), "not valid UTF-8"),
        ("an encoded surrogate in a string", Array(#"{"type":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8), "not valid UTF-8"),
        ("a code point past U+10FFFF in a string", Array(#"{"type":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8), "not valid UTF-8"),
        ("a cut UTF-8 sequence in a string", Array(#"{"type":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8), "not valid UTF-8"),
        ("a UTF-8 byte outside a string", Array(#"{"type":1"#.utf8) + [0xE9] + Array("}".utf8), "found byte 0xE9"),
        ("a NUL escape in the id", Array(#"{"type":"permission.changed","id":"\u0000","subject":"s","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"denied"}"#.utf8), "id: holds U+0000 (a control character)"),
        ("an unescaped tab in a string", Array(#"{"type":"a"#.utf8) + [0x09] + Array(#"b"}"#.utf8), "must be escaped"),
        ("a line one byte too long", Array(repeating: UInt8(ascii: " "), count: EventJSON.maxLineBytes + 1), "at most 1048576"),
        ("the longest line, all blank", Array(repeating: UInt8(ascii: " "), count: EventJSON.maxLineBytes), "blank"),
        ("the longest time", Array((event.replacingOccurrences(of: "2026-11-20T09:00:00Z", with: "9999-12-31T23:59:59.999999-00:00") + "}").utf8), "event"),
        ("a time past 9999 in UTC", Array((event.replacingOccurrences(of: "2026-11-20T09:00:00Z", with: "9999-12-31T23:59:59-00:01") + "}").utf8), "outside the years 0000 to 9999"),
        ("a time before 0000 in UTC", Array((event.replacingOccurrences(of: "2026-11-20T09:00:00Z", with: "0000-01-01T00:00:00+00:01") + "}").utf8), "outside the years 0000 to 9999"),
        ("29 February of a year not leap", Array((event.replacingOccurrences(of: "2026-11-20", with: "1900-02-29") + "}").utf8), "day 29 out of range"),
        ("a question expiring at the latest time", Array(#"{"type":"question.asked","id":"q","subject":"s","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6a3f1c2e-0000-4000-8000-000000000001","topic":{"significantAppUpdate":{"description":"\u00e9"}},"choices":[{"id":"a","title":"A","answer":"approval","grantSeconds":9223372036854775807},{"id":"d","title":"D","answer":"denial"}],"expiresAt":"9999-12-31T23:59:59.999999Z"}}"#.utf8), "event"),
        ("a handle of 20 digits and every separator", Array(#"{"type":"handles.observed","id":"h","subject":"s","occurredAt":"2026-11-20T09:00:00Z","checked":[{"value":"+(123) 456.789-012 345 678 90","kind":"phoneNumber"},{"value":" \u0130@X.Y ","kind":"emailAddress"}],"known":[]}"#.utf8), "event"),
    ]

    @Test(arguments: hostileLines.indices)
    func aHostileLineIsRejectedOrReadWithoutATrap(index: Int) throws {
        let (name, line, outcome) = Self.hostileLines[index]
        let read = try Self.checkLine(line)
        switch outcome {
        case "event": #expect(read, "\(name)")
        case "blank": #expect(try EventJSON.decode(line: line) == nil, "\(name)")
        default:
            do {
                _ = try EventJSON.decode(line: line)
                Issue.record("\(name): not rejected")
            } catch {
                #expect(error.description.contains(outcome), "\(name): \(error)")
            }
        }
    }

    // MARK: Hostile records

    /// A record of `permission.changed` (tag 7) from its envelope's fields.
    static func record(
        version: UInt8 = 1, tag: UInt8 = 7, occurredAt: [UInt8] = [0], recordedAt: [UInt8] = [0], rest: [UInt8] = [1, 1, 0]
    ) -> [UInt8] {
        [version, tag] + occurredAt + recordedAt + [1, UInt8(ascii: "e"), 1, UInt8(ascii: "s")] + rest
    }

    /// Records a damaged or hostile data file could hold, each with what comes of it: `event`, or words of the
    /// `DecodingError`. None traps.
    static let hostileRecords: [(String, [UInt8], outcome: String)] = [
        ("empty", [], "record ends early"),
        ("version 0", record(version: 0), "unknown format version 0"),
        ("version 2", record(version: 2), "a version 2 record read as version 1"),
        ("version 3", record(version: 3), "unknown format version 3"),
        ("type tag 0", record(tag: 0), "unknown event type tag 0"),
        ("type tag 9", record(tag: 9), "unknown event type tag 9"),
        ("the smallest record", record(), "event"),
        ("times at Int64.min and Int64.max", record(
            occurredAt: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],
            recordedAt: [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), "event"),
        ("an over-long varint of zero", record(occurredAt: [0x80, 0x80, 0x00]), "event"),
        ("a varint of 65 bits", record(occurredAt: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]), "number too large"),
        ("a varint of 11 bytes", record(occurredAt: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), "number too large"),
        ("a varint that never ends", [1, 7] + Array(repeating: 0xFF, count: 64), "number too large"),
        ("a text longer than the record", [1, 7, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x41], "count 4294967295 exceeds the record"),
        ("a text of 2^63 bytes", [1, 7, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], "count 9223372036854775808 exceeds the record"),
        ("a text that is not UTF-8", [1, 7, 0, 0, 1, 0xFF, 1, 0x41, 1, 1, 0], "text is not UTF-8"),
        ("permission code 0", record(rest: [0, 1, 0]), "unknown permission code 0"),
        ("permission code 255", record(rest: [255, 1, 0]), "unknown permission code 255"),
        ("cause code 6", record(rest: [1, 1, 6]), "unknown cause code 6"),
        ("handles.observed with nothing checked", record(tag: 6, rest: [0, 0]), "event"),
        ("handles.observed counting 2^64-1 handles", record(tag: 6, rest: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), "exceeds the record"),
        ("an empty handle", record(tag: 6, rest: [1, 3, 0, 0]), "an empty handle"),
        ("handle kind 4", record(tag: 6, rest: [1, 4, 1, 0x41, 0]), "unknown handle kind code 4"),
        ("question.asked with no people", record(tag: 1, rest: Array(repeating: 0, count: 16) + [1, 0, 0]), "a communication topic without people"),
        ("a name mask with bit 6", record(tag: 1, rest: Array(repeating: 0, count: 16) + [1, 1, 3, 1, 0x41, 0xC0]), "bad name mask"),
        ("an empty name, no actions, no choices", record(tag: 1, rest: Array(repeating: 0, count: 16) + [1, 1, 3, 1, 0x41, 0x80, 0, 0, 0, 0]), "the default choice is not among the question's choices"),
        ("an update of one choice that is the default", record(tag: 1, rest: Array(repeating: 0, count: 16) + [2, 0, 1, 1, 0x61, 0, 2, 0, 1, 0x61, 0]), "event"),
        ("a grant past Int64.max", record(tag: 1, rest: Array(repeating: 0, count: 16) + [2, 0, 1, 1, 0x61, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 0x61, 0]), "invalid choice"),
        ("a grant on a denial", record(tag: 1, rest: Array(repeating: 0, count: 16) + [2, 0, 1, 1, 0x61, 0, 2, 1, 1, 0x61, 0]), "invalid choice"),
        ("an expiry flag of 2", record(tag: 1, rest: Array(repeating: 0, count: 16) + [2, 0, 1, 1, 0x61, 0, 2, 0, 1, 0x61, 2]), "bad presence flag 2"),
        ("an ask error message flag of 2", record(tag: 3, rest: Array(repeating: 0, count: 16) + [1, 2]), "bad presence flag 2"),
        ("via code 0", record(tag: 4, rest: Array(repeating: 0, count: 16) + [1, 0x61, 0]), "unknown via code 0"),
    ]

    @Test(arguments: hostileRecords.indices)
    func aHostileRecordIsRejectedOrReadWithoutATrap(index: Int) throws {
        let (name, record, outcome) = Self.hostileRecords[index]
        let read = try Self.checkRecord(record)
        guard outcome != "event" else {
            #expect(read, "\(name)")
            return
        }
        do {
            _ = try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
            Issue.record("\(name): not rejected")
        } catch {
            #expect("\(error)".contains(outcome), "\(name): \(error)")
        }
    }

    // MARK: The properties

    /// Checks the parser's properties on one line; returns whether it held an event.
    static func checkLine(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let parsed: PermissionEvent?
        do {
            parsed = try EventJSON.decode(line: line)
        } catch {
            #expect(!error.description.isEmpty, sourceLocation: sourceLocation)
            return false
        }
        guard let event = parsed else { return false }
        let exported = EventJSON.encode(event)
        let again = try #require(try EventJSON.decode(line: exported), sourceLocation: sourceLocation)
        #expect(again == event, "\(exported)", sourceLocation: sourceLocation)
        #expect(Array(EventJSON.encode(again).utf8) == Array(exported.utf8), sourceLocation: sourceLocation)

        let recordedAt = event.recordedAt ?? event.occurredAt
        if let fields = event.erasedFields {
            // An event in its erased form has no plaintext record: its sealed record keeps its commitment and tokens.
            let record = SealedRecord.erased(event, recordedAt: recordedAt, fields: fields)
            let reread = try record.stored().withUnsafeBytes { try SealedRecord(stored: $0) }
            #expect(reread.box.isEmpty, sourceLocation: sourceLocation)
            #expect(reread.tokens.withUnsafeBytes { SealedRecord.tokenList($0) } == fields.tokens, sourceLocation: sourceLocation)
            #expect(Array(reread.chained.suffix(SealedFields.commitmentSize)) == fields.commitment, sourceLocation: sourceLocation)
            return true
        }
        let record = EventRecord.encode(event, recordedAt: recordedAt)
        let stored = try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
        var expected = event
        expected.recordedAt = recordedAt
        expected.seq = nil
        expected.hash = nil
        #expect(stored == expected, sourceLocation: sourceLocation)
        #expect(Array(EventJSON.encode(stored).utf8) == Array(EventJSON.encode(expected).utf8), sourceLocation: sourceLocation)
        return true
    }

    /// Checks the decoder's properties on one record; returns whether it decoded.
    static func checkRecord(_ record: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let event: PermissionEvent
        do {
            event = try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
        } catch {
            #expect(error is EventRecord.DecodingError && !"\(error)".isEmpty, sourceLocation: sourceLocation)
            return false
        }
        let recordedAt = try #require(event.recordedAt, sourceLocation: sourceLocation)
        // What reads only a record's header (as-of points, the head, event lists) sees what the whole record says.
        for withID in [true, false] {
            let header = try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decodeHeader(bytes, id: withID) }
            #expect(header.type == event.type && header.occurredAt == event.occurredAt, sourceLocation: sourceLocation)
            #expect(header.recordedAt == recordedAt && header.id == (withID ? event.id : ""), sourceLocation: sourceLocation)
        }
        let canonical = EventRecord.encode(event, recordedAt: recordedAt)
        let again = try canonical.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
        #expect(again == event, "\(record)", sourceLocation: sourceLocation)
        #expect(EventRecord.encode(again, recordedAt: recordedAt) == canonical, "\(record)", sourceLocation: sourceLocation)
        #expect(!EventJSON.encode(event).isEmpty, sourceLocation: sourceLocation)
        return true
    }
}
