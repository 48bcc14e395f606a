import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionModel
import Testing

/// docs/spec/PRIVACY.md, "Erasure and determinism": an erased event exports in a form from which an import into an
/// empty ledger restores the same log, and an erasure changes nothing of another subject.
@Suite(.timeLimit(.minutes(10)))
struct ErasedExportTests {
    /// The export's lines.
    static func lines(_ ledger: Ledger) throws -> [String] {
        try ledger.exportText().split(separator: "\n").map(String.init)
    }

    /// Imports `lines` into a new ledger at `path` and returns its export and digest.
    static func roundTrip(_ lines: [String], at path: String) async throws -> (export: [String], digest: String) {
        let copy = try Ledger(path: path, options: .seeded("another seed"))
        try await copy.append(lines.map { try decodeEvent($0) })
        let result = (try Self.lines(copy), try await copy.digest())
        await copy.close()
        #expect(try await Ledger.verify(path: path).isIntact)
        return result
    }

    /// The lines of `subject`'s events.
    static func lines(_ lines: [String], of subject: String) -> [String] {
        lines.filter { $0.contains("\"subject\":\"\(subject)\"") }
    }

    /// Every fixture, erased or not, into a ledger with keys of its own: the same export and digest.
    @Test(arguments: Fixtures.valid) func everyFixtureRoundTripsItsExportAndDigest(name: String) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.importFixture(name)
            let lines = try Self.lines(ledger)
            let digest = try await ledger.digest()
            await ledger.close()
            let copy = try await Self.roundTrip(lines, at: directory + "/copy")
            #expect(copy.export == lines)
            #expect(copy.digest == digest)
        }
    }

    @Test func erasingOneChildOfTheFamilyDayChangesNothingOfTheOthersAndRoundTrips() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.importFixture("family-day.jsonl")
            let before = try Self.lines(ledger)
            let others = ["kid-ava", "kid-ben", "kid-dev"]
            let answers = try ledger.read { view in try others.map { try view.knownHandles(subject: $0) } }

            try await ledger.append([try KeyErasureTests.erasure("erase-cleo", subject: "kid-cleo", at: "2026-11-21T10:00:00Z")])
            let after = try Self.lines(ledger)
            for subject in others {
                #expect(Self.lines(after, of: subject) == Self.lines(before, of: subject), "\(subject)")
            }
            #expect(try ledger.read { view in try others.map { try view.knownHandles(subject: $0) } } == answers)
            // Every one of the child's events with a personal field is erased, and its value shows nowhere.
            let erased = Self.lines(after, of: "kid-cleo").filter { $0.contains("\"commitment\"") }
            #expect(erased.count > 100)
            #expect(!after.joined().contains("+1-555-010-0131"))
            let digest = try await ledger.digest()
            await ledger.close()
            #expect(try await Ledger.verify(path: directory + "/ledger").isIntact)

            let copy = try await Self.roundTrip(after, at: directory + "/copy")
            #expect(copy.export == after)
            #expect(copy.digest == digest)
        }
    }

    @Test func aQuestionAskedBeforeAnErasureIsAnsweredAfterItAndRoundTrips() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded())
            let id = "FAD10000-0000-4000-8000-0000000000AA"
            try await ledger.append(json:
                #"{"type":"question.asked","id":"q","subject":"kid","occurredAt":"2026-11-20T07:00:00Z","recordedAt":"2026-11-20T07:00:00Z","question":{"id":"\#(id)","topic":{"communication":{"people":[{"handle":{"value":"+1-555-010-0199","kind":"phoneNumber"},"name":{"givenName":"Zed"}},{"handle":{"value":"zed@example.com","kind":"emailAddress"}}],"actions":["message"]}},"choices":[{"id":"yes","title":"Sure","answer":"approval"},{"id":"no","title":"No","answer":"denial"}],"defaultChoice":"no"}}"#,
                #"{"type":"handles.observed","id":"o","subject":"kid","occurredAt":"2026-11-20T08:00:00Z","recordedAt":"2026-11-20T08:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"},{"value":"+1-555-010-0198","kind":"phoneNumber"}],"known":[]}"#,
                #"{"type":"subject.erased","id":"e","subject":"kid","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:00Z","erasure":{"basis":"guardianRequest"}}"#,
                #"{"type":"question.answered","id":"a","subject":"kid","occurredAt":"2026-11-20T10:00:00Z","recordedAt":"2026-11-20T10:00:00Z","questionId":"\#(id)","choiceId":"yes"}"#)
            let handles = try ledger.read { try $0.knownHandles(subject: "kid") }
            // The answer approves the erased handles: members, known, and erased.
            #expect(handles.count == 2)
            #expect(handles.allSatisfy { $0.erased?.seq == 3 })
            let lines = try Self.lines(ledger)
            #expect(!lines.joined().contains("555-010-0199"))
            #expect(!lines.joined().contains("Zed"))
            #expect(!lines.joined().contains("Sure"))
            let digest = try await ledger.digest()
            await ledger.close()
            // A rebuild from the records, which hold tokens, finds the same tables the append wrote.
            #expect(try await Ledger.verify(path: path).isIntact)

            let copy = try await Self.roundTrip(lines, at: directory + "/copy")
            #expect(copy.export == lines)
            #expect(copy.digest == digest)
        }
    }

    @Test func anErasedEventGivenWithTheWrongNumberOfTokensIsRejected() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.importFixture("family-day.jsonl")
            try await ledger.append([try KeyErasureTests.erasure("erase-cleo", subject: "kid-cleo", at: "2026-11-21T10:00:00Z")])
            let lines = try Self.lines(ledger)
            let observed = try #require(lines.firstIndex { $0.contains("handles.observed") && $0.contains("\"commitment\"") })
            var damaged = Array(lines[...observed])
            damaged[observed] = damaged[observed].replacing(#/"tokens":\["[0-9a-f]+",?/#, with: #""tokens":["#)
            let copy = try Ledger(path: directory + "/copy", options: .seeded())
            let rejected = try await rejections { try await copy.append(damaged.map { try decodeEvent($0) }) }
            #expect(rejected.first?.rejection.reason.contains("tokens") == true)
            #expect(try copy.head().seq == 0)
        }
    }
}

extension ErasedExportTests {
    /// An erasure with a cut keeps the subject's lookup key, for the handles after the cut: a value erased before
    /// the cut and recorded again after it is one handle. The export carries the tokens of the events that share
    /// that key, and the import takes them, with aliases for lookups by value (docs/STORAGE.md, "Handle values").
    @Test func anErasureBeforeATimeRoundTripsItsExportAndHashes() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.importFixture("family-day.jsonl")
            try await ledger.append([try KeyErasureTests.erasure("erase-cleo", subject: "kid-cleo", at: "2026-11-21T10:00:00Z", before: "2026-11-20T13:00:00Z")])
            let after = try Self.lines(ledger)
            let digest = try await ledger.digest()
            await ledger.close()
            let copy = try await Self.roundTrip(after, at: directory + "/copy")
            #expect(copy.export == after)
            #expect(copy.digest == digest)
        }
    }

    /// The same, event by event: a value asked about before the cut and observed after it, in the ledger, in an
    /// import of its export, and in both after the same event is appended to each.
    @Test func aValueErasedBeforeTheCutAndRecordedAfterItIsOneHandleInAnImportToo() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            let id = "FAD10000-0000-4000-8000-0000000000AB"
            try await ledger.append(json:
                #"{"type":"question.asked","id":"q","subject":"kid","occurredAt":"2026-11-20T07:00:00Z","recordedAt":"2026-11-20T07:00:00Z","question":{"id":"\#(id)","topic":{"communication":{"people":[{"handle":{"value":"+1-555-010-0199","kind":"phoneNumber"}}],"actions":["message"]}},"choices":[{"id":"yes","title":"Sure","answer":"approval"},{"id":"no","title":"No","answer":"denial"}],"defaultChoice":"no"}}"#,
                #"{"type":"handles.observed","id":"o1","subject":"kid","occurredAt":"2026-11-20T08:00:00Z","recordedAt":"2026-11-20T08:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"}],"known":[{"value":"+1-555-010-0199","kind":"phoneNumber"}]}"#,
                #"{"type":"handles.observed","id":"o","subject":"kid","occurredAt":"2026-11-20T15:00:00Z","recordedAt":"2026-11-20T15:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"},{"value":"+1-555-010-0198","kind":"phoneNumber"}],"known":[{"value":"+1-555-010-0199","kind":"phoneNumber"}]}"#,
                #"{"type":"subject.erased","id":"e","subject":"kid","occurredAt":"2026-11-20T16:00:00Z","recordedAt":"2026-11-20T16:00:00Z","erasure":{"basis":"retention","before":"2026-11-20T12:00:00Z"}}"#,
                #"{"type":"handles.observed","id":"o2","subject":"other","occurredAt":"2026-11-20T16:30:00Z","recordedAt":"2026-11-20T16:30:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"}],"known":[]}"#)
            let lines = try Self.lines(ledger)
            // The observation after the cut carries its tokens; the other subject's, with no erasure, does not.
            #expect(lines[1].contains(#""commitment""#) && lines[2].contains(#""tokens":["#) && !lines[2].contains(#""commitment""#))
            #expect(!lines[4].contains(#""tokens""#))
            // One handle: the value observed before the cut, erased there, and known again after it.
            #expect(try ledger.read { try $0.knownHandles(subject: "kid") }.map(\.since) == [try Timestamp(rfc3339: "2026-11-20T15:00:00Z")])

            let copyPath = directory + "/copy"
            let copy = try Ledger(path: copyPath, options: .seeded("another seed"))
            try await copy.append(lines.map { try decodeEvent($0) })
            #expect(try Self.lines(copy) == lines)
            let erasedOne = try CommunicationHandle(value: "+1-555-010-0199", kind: .phoneNumber)
            let answers = try ledger.read { try [$0.isKnownHandle(erasedOne, subject: "kid"), $0.isKnownHandle(erasedOne, subject: "other")] }
            for one in [ledger, copy] {
                #expect(try one.read { try $0.knownHandles(subject: "kid") }.count == 1)
                #expect(try one.read { try $0.isKnownHandle(try CommunicationHandle(value: "+1-555-010-0198", kind: .phoneNumber), subject: "kid") } == false)
                #expect(try one.read { try [$0.isKnownHandle(erasedOne, subject: "kid"), $0.isKnownHandle(erasedOne, subject: "other")] } == answers)
            }
            #expect(answers == [true, false])
            #expect(try await copy.digest() == ledger.digest())

            // A second erasure with a cut, which writes the handle values again (and the copy's aliases), then the
            // same value observed again, now not known, in both: the one handle leaves the set in both alike.
            let again = #"{"type":"subject.erased","id":"e2","subject":"kid","occurredAt":"2026-11-20T16:45:00Z","recordedAt":"2026-11-20T16:45:00Z","erasure":{"basis":"retention","before":"2026-11-20T12:30:00Z"}}"#
            try await ledger.append(json: again)
            try await copy.append(json: again)
            let later = #"{"type":"handles.observed","id":"o3","subject":"kid","occurredAt":"2026-11-20T17:00:00Z","recordedAt":"2026-11-20T17:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"},{"value":"+1-555-010-0197","kind":"phoneNumber"}],"known":[]}"#
            try await ledger.append(json: later)
            try await copy.append(json: later)
            for one in [ledger, copy] {
                #expect(try one.read { try $0.knownHandles(subject: "kid") }.isEmpty)
                #expect(try one.read { try $0.isKnownHandle(erasedOne, subject: "kid") } == false)
            }
            #expect(try await copy.digest() == ledger.digest())
            let exported = try Self.lines(ledger)
            #expect(try Self.lines(copy).dropLast().elementsEqual(exported.dropLast()))
            #expect(exported.last!.contains(#""tokens":["#))
            await ledger.close()
            await copy.close()
            #expect(try await Ledger.verify(path: directory + "/ledger").isIntact)
            #expect(try await Ledger.verify(path: copyPath).isIntact)
        }
    }

    /// An import in two parts, the first before the erasure with a cut: the second part's tokens name values the
    /// copy already holds under tokens of its own, which they keep, so that each value stays one handle.
    @Test func tokensGivenForValuesTheLedgerHoldsAlreadyKeepTheTokensItHas() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try await ledger.append(json:
                #"{"type":"handles.observed","id":"o1","subject":"kid","occurredAt":"2026-11-20T08:00:00Z","recordedAt":"2026-11-20T08:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"}],"known":[{"value":"+1-555-010-0199","kind":"phoneNumber"}]}"#,
                #"{"type":"handles.observed","id":"o2","subject":"kid","occurredAt":"2026-11-20T15:00:00Z","recordedAt":"2026-11-20T15:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"},{"value":"+1-555-010-0198","kind":"phoneNumber"}],"known":[{"value":"+1-555-010-0199","kind":"phoneNumber"}]}"#)
            let copyPath = directory + "/copy"
            let copy = try Ledger(path: copyPath, options: .seeded("another seed"))
            try await copy.append(try Self.lines(ledger).map { try decodeEvent($0) })
            try await ledger.append(json:
                #"{"type":"subject.erased","id":"e","subject":"kid","occurredAt":"2026-11-20T16:00:00Z","recordedAt":"2026-11-20T16:00:00Z","erasure":{"basis":"retention","before":"2026-11-20T12:00:00Z"}}"#,
                #"{"type":"handles.observed","id":"o3","subject":"kid","occurredAt":"2026-11-20T17:00:00Z","recordedAt":"2026-11-20T17:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"}],"known":[]}"#)
            let rest = Array(try Self.lines(ledger).dropFirst(2))
            #expect(rest[1].contains(#""tokens":["#))
            try await copy.append(rest.map { try decodeEvent($0) })
            for one in [ledger, copy] {
                #expect(try one.read { try $0.knownHandles(subject: "kid") }.isEmpty)
            }
            #expect(try await copy.digest() == ledger.digest())
            await ledger.close()
            await copy.close()
            #expect(try await Ledger.verify(path: copyPath).isIntact)
        }
    }

    @Test func aReadableEventGivenWithTheWrongNumberOfTokensIsRejected() throws {
        let line = #"{"type":"handles.observed","id":"o","subject":"kid","occurredAt":"2026-11-20T15:00:00Z","checked":[{"value":"+1-555-010-0199","kind":"phoneNumber"}],"known":[],"tokens":["00112233445566778899aabbccddeeff","00112233445566778899aabbccddeeff"]}"#
        #expect { try decodeEvent(line) } throws: { "\($0)".contains("tokens: lists 2 tokens for the event's 1 handles") }
        let short = line.replacing(#/,"00112233445566778899aabbccddeeff"\]/#, with: "]").replacing("eeff\"]", with: "ee\"]")
        #expect { try decodeEvent(short) } throws: { "\($0)".contains("tokens[0]: must be 32 lowercase hex digits") }
    }
}
