import Foundation
import LMDB
@_spi(StorageEngine) import PermissionLedger
@testable import PermissionLedger
import PermissionModel
import Testing

/// docs/spec/EVENTS.md "Text" in the engine: JSON input and the Swift API meet the same rules when an event is
/// appended; events already stored are read as they are.
@Suite struct AppendedTextRuleTests {
    static let identifierRule = "identifiers may not hold control, format or separator characters"
    static let textRule = "text may not hold control characters other than tab and line feed"

    static let asked = #"{"type":"question.asked","id":"ev-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z","question":{"id":"6A3F1C2E-0000-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"dragonslayer42","kind":"custom"},"name":{"givenName":"Alex","familyName":"Smith"}}]}},"choices":[{"id":"approve","title":"Approve","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}]}}"#
    static let questionID = UUID(uuidString: "6A3F1C2E-0000-4000-8000-000000000001")!

    /// A change to `asked`, and the rejection it gets.
    static let badJSON: [(String, String, String)] = [
        (#""id":"ev-1""#, #""id":"ev\u200b1""#, "id: holds U+200B (a format character); \(identifierRule)"),
        (#""subject":"kid-1""#, #""subject":"kid\u20281""#, "subject: holds U+2028 (a line separator); \(identifierRule)"),
        (#""subject":"kid-1""#, #""subject":"\ufeffkid-1""#, "subject: holds U+FEFF (a format character); \(identifierRule)"),
        ("dragonslayer42", #"dragon\u200dslayer42"#, "question.topic.communication.people[0].handle.value: holds U+200D (a format character); \(identifierRule)"),
        (#""Alex""#, #""Al\u001bex""#, "question.topic.communication.people[0].name.givenName: holds U+001B (a control character); \(textRule)"),
        (#""Smith""#, #""Smith\r""#, "question.topic.communication.people[0].name.familyName: holds U+000D (a control character); \(textRule)"),
        (#""title":"Approve""#, #""title":"Approve\u0085""#, "question.choices[0].title: holds U+0085 (a control character); \(textRule)"),
        (#""id":"decline""#, #""id":"decl\u00adine""#, "question.choices[1].id: holds U+00AD (a format character); \(identifierRule)"),
    ]

    @Test("JSON input: a forbidden character is rejected with the field's path and the code point", arguments: badJSON)
    func jsonInput(original: String, replacement: String, expected: String) throws {
        let line = Self.asked.replacingOccurrences(of: original, with: replacement)
        #expect(line != Self.asked)
        let rejection = #expect(throws: EventRejection.self) { try EventJSON.decode(line: line) }
        #expect(rejection?.description == "question.asked: " + expected)
    }

    @Test("JSON input: names, titles and a description may hold tab, line feed, a zero-width joiner and bidi controls")
    func jsonFreeTextAccepted() async throws {
        let line = Self.asked
            .replacingOccurrences(of: #""Alex""#, with: #""Al\tex \u200d\u202bשלום\u202c""#)
            .replacingOccurrences(of: #""title":"Approve""#, with: #""title":"Approve\nfor today 👨‍👩‍👧""#)
        try await withLedger { ledger async throws in
            let event = try decodeEvent(line)
            #expect(try await ledger.append(event) == .appended(seq: 1))
            var stored: [PermissionEvent] = []
            stored += try storedEvents(ledger).map(\.event)
            guard case .questionAsked(let question) = stored.first?.payload, case .communication(let topic) = question.topic else {
                Issue.record("not stored as asked: \(stored)")
                return
            }
            #expect(topic.personInformation[0].nameComponents?.givenName == "Al\tex \u{200D}\u{202B}שלום\u{202C}")
            #expect(question.choices[0].title == "Approve\nfor today 👨‍👩‍👧")
        }
    }

    // MARK: The Swift API

    static func permission(id: String = "ev-p", subject: String = "kid-1") -> PermissionEvent {
        PermissionEvent(
            id: id, subject: subject, occurredAt: try! time("2026-11-20T09:00:00Z"), payload: .permissionChanged(.camera, state: .denied, cause: nil))
    }

    @Test("Ledger.append: an event id or subject with a format or separator character is rejected and nothing is written")
    func appendRejectsIdentifiers() async throws {
        try await withLedger { ledger async throws in
            let rejected = await rejections {
                try await ledger.append([Self.permission(subject: "kid\u{200B}1"), Self.permission(id: "ev\u{2029}p")])
            }
            #expect(rejected.map(\.rejection.description) == [
                "permission.changed: subject: holds U+200B (a format character); \(Self.identifierRule)",
                "permission.changed: id: holds U+2029 (a paragraph separator); \(Self.identifierRule)",
            ])
            #expect(try ledger.head().seq == 0)
        }
    }

    @Test("SubjectLedger: a name, an error's message, a choiceId or a subject breaking the rules is rejected with its path")
    func subjectLedgerRejects() async throws {
        try await withLedger { ledger async throws in
            let child = ledger.subject("kid-1")
            var name = PersonNameComponents()
            name.givenName = "Alex"
            name.nickname = "Al\u{1B}[2J"
            let person = PersonInformation(handle: try CommunicationHandle(value: "dragonslayer42", kind: .custom), nameComponents: name)
            let named = try PermissionQuestion(communicationTopic: try CommunicationTopic(personInformation: [person]))
            let askedWithName = await rejections { try await child.recordAsk(named) }
            #expect(askedWithName.map(\.rejection.description) == [
                "question.asked: question.topic.communication.people[0].name.nickname: holds U+001B (a control character); \(Self.textRule)",
            ])

            let question = try PermissionQuestion(handle: try CommunicationHandle(value: "dragonslayer42", kind: .custom))
            let otherSubject = await rejections { try await ledger.subject("kid\u{2028}1").recordAsk(question) }
            #expect(otherSubject.map(\.rejection.description) == [
                "question.asked: subject: holds U+2028 (a line separator); \(Self.identifierRule)",
            ])

            try await child.recordAsk(question)
            let failed = await rejections {
                try await child.recordAskFailed(question.id, error: AskError(code: .systemError, message: "boom\u{1B}]0;owned\u{07}"))
            }
            #expect(failed.map(\.rejection.description) == [
                "question.askFailed: error.message: holds U+001B (a control character); \(Self.textRule)",
            ])
            let answered = await rejections {
                try await child.recordResponse(to: question.id, choiceID: "approve\u{200B}")
            }
            #expect(answered.map(\.rejection.description) == [
                "question.answered: choiceId: holds U+200B (a format character); \(Self.identifierRule)",
            ])
            #expect(try ledger.head().seq == 1)

            // A message with a tab and a line feed is text like any other.
            #expect(try await child.recordAskFailed(question.id, error: AskError(code: .systemError, message: "line one\n\tline two")) == .appended(seq: 2))
        }
    }

    // MARK: Events already stored

    @Test("an event stored before the rules (a zero-width space in its subject, a control character in a name) is rebuilt, verified and read as it is; a new one like it is rejected")
    func storedEventsAreReadAsTheyAre() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            var head = LogHead.empty
            do {
                let ledger = try Ledger(path: path, options: .init(mapSize: 1 << 20, durable: false))
                try await ledger.append(Self.permission())
                head = try ledger.head()
            }
            // Written to the log as an older version of the engine would have accepted it, chained on properly.
            var name = PersonNameComponents()
            name.givenName = "Al\u{1B}ex"
            let person = PersonInformation(handle: try CommunicationHandle(value: "orbit", kind: .custom), nameComponents: name)
            let question = try PermissionQuestion(id: Self.questionID, topic: .communication(try CommunicationTopic(personInformation: [person])))
            let recordedAt = try #require(head.recordedAt)
            let old = PermissionEvent(
                id: "old\u{200B}1", subject: "kid\u{200B}1", occurredAt: recordedAt, recordedAt: recordedAt, payload: .questionAsked(question))
            let record = EventRecord.encode(old, recordedAt: recordedAt)
            let hash = chainHash(previous: head.hash, record: record)
            do {
                let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
                let events = try environment.openDatabase("events", create: false)
                try environment.write { txn in try txn.put(events, key: Keys.seq(head.seq + 1), value: hash.bytes + record) }
            }

            #expect(try await Ledger.rebuildProjections(path: path).seq == head.seq + 1)
            let ledger = try Ledger(path: path, options: .init(mapSize: 1 << 20, durable: false))
            #expect(try await ledger.verify().isIntact)
            var stored: [PermissionEvent] = []
            stored += try storedEvents(ledger).map(\.event)
            #expect(stored.count == 2)
            #expect(stored.last?.subject == "kid\u{200B}1")
            #expect(stored.last?.id == "old\u{200B}1")
            #expect(stored.last?.payload == .questionAsked(question))
            #expect(try await ledger.question(Self.questionID)?.state == .pending)
            // A new event with such a subject is not accepted.
            let rejected = await rejections { try await ledger.append(Self.permission(id: "new-1", subject: "kid\u{200B}1")) }
            #expect(rejected.map(\.rejection.description) == [
                "permission.changed: subject: holds U+200B (a format character); \(Self.identifierRule)",
            ])
        }
    }
}
