import Foundation
import PermissionLedger
import PermissionModel
import Testing

@Suite struct EventCodecTests {
    // MARK: Round trips

    /// (input line, its canonical encoding): one or more per event type.
    static let canonicalForms: [(String, String)] = [
        // question.asked, communication: lowercase UUID, an offset, duplicate actions out of order, names, default choices.
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T10:00:00+01:00","question":{"id":"6a3f1c2e-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"dragonslayer42","kind":"custom"},"name":{"familyName":"Smith","givenName":"Alex"}},{"handle":{"value":" Mom@Example.COM ","kind":"emailAddress"}}],"actions":["audioCall","message","audioCall"]}},"expiresAt":"2026-11-21T09:00:00Z"}}"#,
         #"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"dragonslayer42","kind":"custom"},"name":{"givenName":"Alex","familyName":"Smith"}},{"handle":{"value":"mom@example.com","kind":"emailAddress"}}],"actions":["message","audioCall"]}},"choices":[{"id":"approve","title":"Approve","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}],"defaultChoice":"decline","expiresAt":"2026-11-21T09:00:00Z"}}"#),
        // question.asked, update with custom choices, an explicit default and a fractional recordedAt; no actions key.
        (#"{"question":{"choices":[{"id":"update","title":"Update now","answer":"approval","grantSeconds":600},{"id":"stay","title":"Stay on \"4.x\"","answer":"denial"}],"defaultChoice":"update","id":"6A3F1C2E-0000-4000-8000-000000000002","topic":{"significantAppUpdate":{"description":"Version 5.0 adds voice chat.\nReally."}}},"recordedAt":"2026-11-20T09:00:00.25Z","occurredAt":"2026-11-20T09:00:00Z","subject":"kid-2","id":"ev-2","type":"question.asked"}"#,
         #"{"type":"question.asked","id":"ev-2","subject":"kid-2","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:00.250000Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000002","topic":{"significantAppUpdate":{"description":"Version 5.0 adds voice chat.\nReally."}},"choices":[{"id":"update","title":"Update now","answer":"approval","grantSeconds":600},{"id":"stay","title":"Stay on \"4.x\"","answer":"denial"}],"defaultChoice":"update"}}"#),
        // question.asked with an empty actions list and every name field.
        (#"{"type":"question.asked","id":"ev-3","subject":"kid-3","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000003","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"},"name":{"nickname":"N","nameSuffix":"Sr.","familyName":"F","middleName":"M","givenName":"G","namePrefix":"Dr."}}]}}}}"#,
         #"{"type":"question.asked","id":"ev-3","subject":"kid-3","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000003","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"},"name":{"namePrefix":"Dr.","givenName":"G","middleName":"M","familyName":"F","nameSuffix":"Sr.","nickname":"N"}}],"actions":[]}},"choices":[{"id":"approve","title":"Approve","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}],"defaultChoice":"decline"}}"#),
        (#"{"type":"question.sendCanceled","id":"ev-4","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6a3f1c2e-0000-4000-8000-000000000001"}"#,
         #"{"type":"question.sendCanceled","id":"ev-4","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001"}"#),
        (#"{"type":"question.askFailed","id":"ev-5","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"message":"boom \u00e9","code":"systemError"}}"#,
         #"{"type":"question.askFailed","id":"ev-5","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"code":"systemError","message":"boom é"}}"#),
        (#"{"type":"question.askFailed","id":"ev-6","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"code":"unknown"}}"#,
         #"{"type":"question.askFailed","id":"ev-6","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"code":"unknown"}}"#),
        // question.answered: via defaults to messages and is always written.
        (#"{"type":"question.answered","id":"ev-7","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#,
         #"{"type":"question.answered","id":"ev-7","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve","via":"messages"}"#),
        (#"{"type":"question.answered","id":"ev-8","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve","via":"inPerson"}"#,
         #"{"type":"question.answered","id":"ev-8","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve","via":"inPerson"}"#),
        (#"{"type":"question.expired","id":"ev-9","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001"}"#,
         #"{"type":"question.expired","id":"ev-9","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001"}"#),
        // handles.observed: normalized values; a handle checked twice is folded.
        (#"{"type":"handles.observed","id":"ev-10","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":[{"kind":"emailAddress","value":"A@B.C"},{"value":"a@b.c","kind":"emailAddress"},{"value":"robo_rex","kind":"custom"}],"known":[{"value":"a@b.C","kind":"emailAddress"}]}"#,
         #"{"type":"handles.observed","id":"ev-10","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":[{"value":"a@b.c","kind":"emailAddress"},{"value":"robo_rex","kind":"custom"}],"known":[{"value":"a@b.c","kind":"emailAddress"}]}"#),
        (#"{"type":"permission.changed","id":"ev-11","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"authorized","cause":"systemPrompt"}"#,
         #"{"type":"permission.changed","id":"ev-11","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"authorized","cause":"systemPrompt"}"#),
        (#"{"type":"permission.changed","id":"ev-12","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"health","state":"unsupported"}"#,
         #"{"type":"permission.changed","id":"ev-12","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"health","state":"unsupported"}"#),
        (#"{"type":"subject.erased","id":"ev-14","subject":"kid-1","occurredAt":"2026-11-20T09:06:00Z","erasure":{"before":"2026-11-20T09:00:00Z","reference":"case-4711","basis":"retention"}}"#,
         #"{"type":"subject.erased","id":"ev-14","subject":"kid-1","occurredAt":"2026-11-20T09:06:00Z","erasure":{"basis":"retention","reference":"case-4711","before":"2026-11-20T09:00:00Z"}}"#),
        // An erased event's exported form: null values beside their erasure, the commitment and tokens last.
        (#"{"type":"handles.observed","id":"ev-15","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","checked":[{"kind":"custom","value":null,"erased":{"basis":"other","seq":9}},{"value":null,"kind":"custom","erased":{"seq":9,"basis":"other"}}],"known":[],"tokens":["000102030405060708090a0b0c0d0e0f","100102030405060708090a0b0c0d0e0f"],"commitment":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}"#,
         #"{"type":"handles.observed","id":"ev-15","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","checked":[{"value":null,"kind":"custom","erased":{"seq":9,"basis":"other"}},{"value":null,"kind":"custom","erased":{"seq":9,"basis":"other"}}],"known":[],"commitment":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","tokens":["000102030405060708090a0b0c0d0e0f","100102030405060708090a0b0c0d0e0f"]}"#),
        // seq first, hash last.
        (#"{"hash":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","type":"question.expired","id":"ev-13","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","recordedAt":"2026-11-20T09:05:01Z","seq":7,"questionId":"6A3F1C2E-0000-4000-8000-000000000001"}"#,
         #"{"seq":7,"type":"question.expired","id":"ev-13","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","recordedAt":"2026-11-20T09:05:01Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","hash":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"}"#),
    ]

    @Test(arguments: canonicalForms)
    func encodesInCanonicalForm(input: String, canonical: String) throws {
        let event = try decodeEvent(input)
        #expect(EventJSON.encode(event) == canonical)
        // The canonical form is a fixed point, and decodes to the same event.
        let again = try decodeEvent(canonical)
        #expect(again == event)
        #expect(EventJSON.encode(again) == canonical)
    }

    @Test func canonicalFormsCoverEveryEventType() throws {
        let types = Set(try Self.canonicalForms.map { try decodeEvent($0.0).type })
        #expect(types == Set(EventType.allCases))
    }

    @Test func decodesTheFieldsItReads() throws {
        let e = try decodeEvent(Self.canonicalForms[0].0)
        #expect(e.id == "ev-1")
        #expect(e.subject == "kid-1")
        #expect(e.occurredAt == (try time("2026-11-20T09:00:00Z")))
        #expect(e.recordedAt == nil)
        #expect(e.seq == nil)
        #expect(e.hash == nil)
        guard case .questionAsked(let q) = e.payload else { Issue.record("wrong payload \(e.payload)"); return }
        #expect(q.id == UUID(uuidString: "6A3F1C2E-0000-4000-8000-000000000001"))
        #expect(q.topic.handles.map(\.value) == ["dragonslayer42", "mom@example.com"])
        #expect(q.expiresAt == (try time("2026-11-21T09:00:00Z")))

        let observed = try decodeEvent(Self.canonicalForms[9].0)
        guard case .handlesObserved(let checked, let known) = observed.payload else { Issue.record("wrong payload"); return }
        #expect(checked.count == 2)
        #expect(known == [try CommunicationHandle(value: "a@b.c", kind: .emailAddress)])

        let sealed = try decodeEvent(Self.canonicalForms.last!.0)
        #expect(sealed.seq == 7)
        #expect(sealed.hash?.description == "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
    }

    @Test(arguments: Fixtures.valid)
    func everyFixtureLineReencodesDeterministically(name: String) throws {
        let fixture = try Fixtures.fixture(name)
        for (event, line) in zip(fixture.events, fixture.lines) {
            let encoded = EventJSON.encode(event)
            let decoded = try #require(try EventJSON.decode(line: encoded), "line \(line)")
            #expect(decoded == event, "line \(line)")
            #expect(EventJSON.encode(decoded) == encoded, "line \(line)")
        }
    }

    @Test func exportFormHasSeqRecordedAtAndHash() async throws {
        try await withLedger { ledger async throws in
            _ = try await ledger.append(try Self.canonicalForms.prefix(1).map { try decodeEvent($0.0) }
                + [try decodeEvent(Self.canonicalForms[6].0)])
            let lines = try ledger.exportText().split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 3 && lines.last == "", "two lines, each ending in a newline")
            for (index, line) in lines.dropLast().enumerated() {
                #expect(line.hasPrefix("{\"seq\":\(index + 1),\"type\":"), "\(line)")
                #expect(line.contains("\"recordedAt\":\""), "the ledger's clock assigned recordedAt")
                let hash = try #require(line.range(of: ",\"hash\":\"")).upperBound
                let hex = line[hash...].dropLast(2)
                #expect(hex.count == 64 && hex.allSatisfy { "0123456789abcdef".contains($0) }, "\(hex)")
                #expect(line.hasSuffix("\"}"))
                let event = try decodeEvent(String(line))
                #expect(EventJSON.encode(event) == String(line), "export lines are canonical")
            }
        }
    }

    @Test func escapesAreDecodedAndWrittenMinimally() throws {
        let e = try decodeEvent(#"{"type":"permission.changed","id":"ev-\u00e9\ud83d\udc09\/","subject":"kid\"\\","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"authorized"}"#)
        #expect(e.id == "ev-é🐉/")
        #expect(EventJSON.encode(e).contains(#""id":"ev-é🐉/""#), "non-ASCII written as UTF-8, '/' unescaped")
        #expect(e.subject == "kid\"\\")
        #expect(EventJSON.encode(e).contains(#""subject":"kid\"\\""#))
    }

    // MARK: Rejections that name the field

    static let base = #"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve""#
    static let asked = #"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}],"actions":["message"]}}"#
    static let permission = #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z""#

    static let unknownFields: [(String, String)] = [
        (base + #","responder":"mom"}"#, "responder"),
        (asked + #","priority":1}}"#, "question.priority"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}]},"extra":{}}}}"#, "question.topic.extra"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom","label":"y"}}]}}}}"#, "label"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"},"name":{"firstName":"A"}}]}}}}"#, "firstName"),
        (#"{"type":"question.askFailed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"code":"unknown","detail":"x"}}"#, "error.detail"),
        (permission + #","permission":"camera","state":"denied","choiceId":"approve"}"#, "choiceId"),
        (#"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":[{"value":"x","kind":"custom","since":"now"}],"known":[]}"#, "checked[0].since"),
    ]

    static let wrongTypes: [(String, String)] = [
        (#"{"type":"question.answered","id":"ev-1","subject":5,"occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "subject"),
        (#"{"type":"question.answered","id":["ev-1"],"subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "id"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":1795165200,"questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "occurredAt"),
        (#"{"type":7,"id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z"}"#, "type"),
        (base + #","seq":"1"}"#, "seq"),
        (base + #","seq":1.5}"#, "seq"),
        (base + #","hash":12}"#, "hash"),
        (base + #","via":true}"#, "via"),
        (base + #","recordedAt":{}}"#, "recordedAt"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":1}"#, "choiceId"),
        (#"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":{},"known":[]}"#, "checked"),
        (#"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":["x"],"known":[]}"#, "checked[0]"),
        (asked + #","choices":[{"id":"approve-1h","title":"Approve","answer":"approval","grantSeconds":"3600"},{"id":"decline","title":"Decline","answer":"denial"}]}}"#, "grantSeconds"),
        (asked + #","choices":[{"id":"approve-1h","title":"Approve","answer":"approval","grantSeconds":36.5},{"id":"decline","title":"Decline","answer":"denial"}]}}"#, "grantSeconds"),
        (asked + #","choices":"approve"}}"#, "question.choices"),
        (asked + #","expiresAt":false}}"#, "question.expiresAt"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}],"actions":"message"}}}}"#, "actions"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":"6A3F1C2E-0000-4000-8000-000000000001"}"#, "question"),
        (permission + #","permission":["camera"],"state":"denied"}"#, "permission"),
    ]

    static let missingFields: [(String, String)] = [
        (#"{"id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z"}"#, "type"),
        (#"{"type":"question.answered","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "id"),
        (#"{"type":"question.answered","id":"ev-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "subject"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "occurredAt"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","choiceId":"approve"}"#, "questionId"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001"}"#, "choiceId"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z"}"#, "question"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}]}}}}"#, "question.id"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001"}}"#, "question.topic"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"actions":["message"]}}}}"#, "people"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"name":{"givenName":"A"}}]}}}}"#, "handle"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x"}}]}}}}"#, "kind"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"kind":"custom"}}]}}}}"#, "value"),
        (asked + #","choices":[{"id":"approve","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}]}}"#, "title"),
        (#"{"type":"question.askFailed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001"}"#, "error"),
        (#"{"type":"question.askFailed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"message":"x"}}"#, "error.code"),
        (#"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":[{"value":"x","kind":"custom"}]}"#, "known"),
        (#"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","known":[]}"#, "checked"),
        (permission + #","state":"denied"}"#, "permission"),
        (permission + #","permission":"camera"}"#, "state"),
        (#"{"type":"question.expired","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z"}"#, "questionId"),
        (#"{"type":"question.sendCanceled","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z"}"#, "questionId"),
    ]

    static let unknownEnumerationValues: [(String, String)] = [
        (#"{"type":"question.approved","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z"}"#, "type"),
        (#"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":[{"value":"x","kind":"username"}],"known":[]}"#, "kind"),
        (permission + #","permission":"location","state":"denied"}"#, "permission"),
        (permission + #","permission":"camera","state":"granted"}"#, "state"),
        (permission + #","permission":"camera","state":"denied","cause":"userAction"}"#, "cause"),
        (base + #","via":"screenTime"}"#, "via"),
        (#"{"type":"question.askFailed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","error":{"code":"networkError"}}"#, "error.code"),
        (asked + #","choices":[{"id":"approve","title":"Approve","answer":"approval"},{"id":"decline","title":"Decline","answer":"decline"}]}}"#, "answer"),
        (#"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}],"actions":["message","videoChat"]}}}}"#, "actions[1]"),
        (permission + #","permission":"Camera","state":"denied"}"#, "permission"),
    ]

    static func rejection(_ line: String) -> EventRejection? {
        #expect(throws: EventRejection.self, "\(line)") { try EventJSON.decode(line: line) }
    }

    @Test(arguments: unknownFields)
    func unknownFieldsAreRejectedByName(line: String, field: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains(field) == true, "\(String(describing: rejection))")
        #expect(rejection?.description.contains("unknown") == true, "\(String(describing: rejection))")
    }

    @Test(arguments: wrongTypes)
    func wrongJSONTypesAreRejectedByName(line: String, field: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains(field) == true, "\(String(describing: rejection))")
    }

    @Test(arguments: missingFields)
    func missingRequiredFieldsAreRejectedByName(line: String, field: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains(field) == true, "\(String(describing: rejection))")
    }

    @Test(arguments: unknownEnumerationValues)
    func unknownEnumerationValuesAreRejectedByName(line: String, field: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains(field) == true, "\(String(describing: rejection))")
    }

    @Test func rejectionKeepsTheEventTypeWhenKnown() {
        let rejection = Self.rejection(Self.base + #","responder":"mom"}"#)
        #expect(rejection?.eventType == "question.answered")
        #expect(Self.rejection(Self.unknownEnumerationValues[0].0)?.eventType == nil)
    }

    @Test(arguments: [
        (base + #","seq":0}"#, "seq"),
        (base + #","seq":-1}"#, "seq"),
        (base + #","hash":"00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff"}"#, "hash"),
        (base + #","hash":"0011"}"#, "hash"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E000040008000000000000001","choiceId":"approve"}"#, "questionId"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"{6A3F1C2E-0000-4000-8000-000000000001}","choiceId":"approve"}"#, "questionId"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":""}"#, "choiceId"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid\u0000","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "subject"),
        (#"{"type":"question.answered","id":"ev-1","subject":"","occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "subject"),
        (#"{"type":"question.answered","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00","questionId":"6A3F1C2E-0000-4000-8000-000000000001","choiceId":"approve"}"#, "occurredAt"),
        (asked + #","choices":[{"id":"approve","title":"Approve","answer":"approval","grantSeconds":99999999999999999999},{"id":"decline","title":"Decline","answer":"denial"}]}}"#, "grantSeconds"),
        (asked + #","choices":[]}}"#, "choices"),
        (asked + #","expiresAt":"2026-11-20T09:00:00Z"}}"#, "expiresAt"),
        ("[]", "object"),
        ("\"event\"", "object"),
    ])
    func otherInvalidValuesAreRejectedByName(line: String, field: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains(field) == true, "\(String(describing: rejection))")
    }

    @Test func subjectAndIDLimitsCountBytes() throws {
        let id128 = String(repeating: "é", count: 64)  // 128 bytes
        #expect(try decodeEvent(Self.permission.replacingOccurrences(of: "ev-1", with: id128) + #","permission":"camera","state":"denied"}"#).id == id128)
        let id129 = id128 + "x"
        #expect(Self.rejection(Self.permission.replacingOccurrences(of: "ev-1", with: id129) + #","permission":"camera","state":"denied"}"#)?.description.contains("id") == true)
        let subject256 = String(repeating: "s", count: 256)
        #expect(try decodeEvent(Self.permission.replacingOccurrences(of: "kid-1", with: subject256) + #","permission":"camera","state":"denied"}"#).subject == subject256)
        #expect(Self.rejection(Self.permission.replacingOccurrences(of: "kid-1", with: subject256 + "s") + #","permission":"camera","state":"denied"}"#)?.description.contains("subject") == true)
    }

    // MARK: Lines

    static let valid = permission + #","permission":"camera","state":"denied"}"#

    @Test(arguments: ["", " ", "\t\t", "   \t ", "#", "# a comment", "   # an indented comment", "\t#tab", "\r", "# comment with \r"])
    func blankAndCommentLinesAreSkipped(line: String) throws {
        #expect(try EventJSON.decode(line: line) == nil)
        #expect(try EventJSON.decode(line: Array(line.utf8)) == nil)
    }

    @Test func aTrailingCarriageReturnIsTolerated() throws {
        let plain = try decodeEvent(Self.valid)
        #expect(try decodeEvent(Self.valid + "\r") == plain)
        #expect(try EventJSON.decode(line: Array((Self.valid + "\r").utf8)) == plain)
    }

    @Test func aLineOfExactly1MiBIsRead() throws {
        let padding = String(repeating: " ", count: EventJSON.maxLineBytes - Self.valid.utf8.count)
        let line = Self.valid + padding
        #expect(line.utf8.count == 1 << 20)
        #expect(try EventJSON.decode(line: line)?.id == "ev-1")
    }

    @Test func aLineLongerThan1MiBIsRejected() {
        let padding = String(repeating: " ", count: (1 << 20) + 1 - Self.valid.utf8.count)
        let rejection = Self.rejection(Self.valid + padding)
        #expect(rejection?.description.contains("1 MiB") == true, "\(String(describing: rejection))")
        // A long value, not padding: still rejected for the line's length.
        let huge = Self.permission.replacingOccurrences(of: "kid-1", with: String(repeating: "k", count: 2 << 20)) + #","permission":"camera","state":"denied"}"#
        #expect(Self.rejection(huge)?.description.contains("1 MiB") == true)
    }

    static let invalidUTF8: [[UInt8]] = [
        [0xFF],                // never valid
        [0xC0, 0xAF],          // overlong '/'
        [0xED, 0xA0, 0x80],    // an encoded surrogate
        [0xE2, 0x82],          // truncated sequence
        [0x80],                // lone continuation byte
    ]

    @Test(arguments: invalidUTF8)
    func invalidUTF8IsRejected(bytes: [UInt8]) {
        var line = Array(#"{"type":"permission.changed","id":"ev-1","subject":"kid-"#.utf8)
        line += bytes
        line += Array(#"","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"}"#.utf8)
        let rejection = #expect(throws: EventRejection.self) { try EventJSON.decode(line: line) }
        #expect(rejection?.description.contains("UTF-8") == true, "\(String(describing: rejection))")
    }

    @Test func invalidUTF8OutsideAStringIsRejected() {
        var line = Array(Self.valid.utf8)
        line.insert(0xFF, at: 1)
        #expect(throws: EventRejection.self) { try EventJSON.decode(line: line) }
    }

    @Test func nulBytesAreRejected() {
        var inString = Array(#"{"type":"permission.changed","id":"ev-1","subject":"kid-"#.utf8)
        inString += [0x00]
        inString += Array(#"","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"}"#.utf8)
        let rejection = #expect(throws: EventRejection.self) { try EventJSON.decode(line: inString) }
        #expect(rejection?.description.contains("NUL") == true, "\(String(describing: rejection))")

        var between = Array(Self.valid.utf8)
        between.insert(0x00, at: 1)
        #expect(throws: EventRejection.self) { try EventJSON.decode(line: between) }
        var after = Array(Self.valid.utf8)
        after.append(0x00)
        #expect(throws: EventRejection.self) { try EventJSON.decode(line: after) }
    }

    @Test(arguments: [
        #"{"type":"permission.changed","id":"ev-1","id":"ev-2","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"}"#,
        #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied","state":"denied"}"#,
        #"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","id":"6A3F1C2E-0000-4000-8000-000000000002","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}]}}}}"#,
        #"{"type":"handles.observed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","checked":[{"value":"x","kind":"custom","kind":"custom"}],"known":[]}"#,
        #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied","\u0073tate":"denied"}"#,
    ])
    func duplicateKeysAreRejected(line: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains("twice") == true, "\(String(describing: rejection))")
    }

    @Test(arguments: [1_000, 100_000])
    func deepNestingIsRejectedWithoutCrashing(depth: Int) {
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(Self.rejection(arrays)?.description.contains("nested") == true)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(Self.rejection(objects)?.description.contains("nested") == true)
        let inField = String(Self.valid.dropLast()) + #","extra":"# + arrays + "}"
        #expect(Self.rejection(inField) != nil)
        let unclosed = Self.permission + #","x":"# + String(repeating: "[", count: depth)
        #expect(Self.rejection(unclosed) != nil)
    }

    @Test func modestNestingInAnUnknownFieldIsReportedAsTheField() {
        let line = String(Self.valid.dropLast()) + #","extra":[[[[{"a":[1]}]]]]}"#
        #expect(Self.rejection(line)?.description.contains("extra") == true)
    }

    @Test(arguments: [
        #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied""#,
        #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied",}"#,
        #"{"type":"permission.changed","id":'ev-1',"subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"}"#,
        #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"} {}"#,
        #"{"type":"permission.changed","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"} // note"#,
        #"{"type":"permission.changed","id":"ev-\x","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"}"#,
        #"{"type":"permission.changed","id":"ev-\ud800","subject":"kid-1","occurredAt":"2026-11-20T09:05:00Z","permission":"camera","state":"denied"}"#,
        "{\"type\":\"permission.changed\",\"id\":\"ev-\t1\",\"subject\":\"kid-1\",\"occurredAt\":\"2026-11-20T09:05:00Z\",\"permission\":\"camera\",\"state\":\"denied\"}",
        #"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"x","kind":"custom"}}]}},"choices":[{"id":"a","title":"A","answer":"approval","grantSeconds":01},{"id":"d","title":"D","answer":"denial"}]}}"#,
    ])
    func invalidJSONIsRejected(line: String) {
        let rejection = Self.rejection(line)
        #expect(rejection?.description.contains("JSON") == true, "\(String(describing: rejection))")
    }
}
