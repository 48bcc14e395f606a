import Foundation
import Hummingbird
import HummingbirdTesting
import LedgerServer
import Logging
import PermissionLedger
import PermissionModel
import Testing

/// The audit queries answer with exactly the tool's JSON (the library's `QueryJSON`), as of any point.
@Suite struct QueryTests {
    /// Runs `body` with a client of a server over a ledger holding Fixtures/family-day.jsonl (1200 events).
    static func withFamilyDay(_ body: @escaping @Sendable (any TestClientProtocol, Ledger) async throws -> Void) async throws {
        try await TestLedger.with { test in
            try await test.ledger.append(try Fixtures.events("family-day.jsonl"))
            let app = LedgerServer.application(ledger: test.ledger, configuration: .init(), logger: Logger(label: "test"))
            let ledger = test.ledger
            try await app.test(.router) { client in try await body(client, ledger) }
        }
    }

    /// GETs `uri` and expects 200 with `expected` and a newline, as the tool prints it.
    static func expect(_ client: any TestClientProtocol, _ uri: String, equals expected: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let response = try await client.execute(uri: uri, method: .get)
        #expect(response.status == .ok, "\(uri): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.text == expected + "\n", "\(uri)", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["seq:600", "2026-11-20T12:00:00Z"])
    func queriesEqualTheToolsJSON(asOf text: String) async throws {
        let point = try AsOf(parsing: text)
        try await Self.withFamilyDay { client, ledger in
            let question = UUID(uuidString: "FAD10000-0000-4000-8000-000000000001")!
            let expected = try ledger.read(asOf: point) { view in
                (
                    known: QueryJSON.knownHandlesResult(try view.knownHandles(subject: "kid-ava"), subject: "kid-ava", at: view.point),
                    pending: QueryJSON.questionsResult(try view.questions(subject: "kid-ava", state: .pending), at: view.point),
                    all: QueryJSON.questionsResult(try view.questions(), at: view.point),
                    question: QueryJSON.questionResult(try view.question(question)!, at: view.point),
                    permissions: QueryJSON.permissionsResult(
                        try view.permissions(subject: "kid-ava"), subject: "kid-ava", at: view.point, require: [.camera, .microphone])
                )
            }
            try await Self.expect(client, "/subjects/kid-ava/known-handles?as-of=\(text)", equals: expected.known)
            try await Self.expect(client, "/subjects/kid-ava/questions?state=pending&as-of=\(text)", equals: expected.pending)
            try await Self.expect(client, "/questions?subject=kid-ava&state=pending&as-of=\(text)", equals: expected.pending)
            try await Self.expect(client, "/questions?as-of=\(text)", equals: expected.all)
            try await Self.expect(client, "/questions/\(question.uuidString)?as-of=\(text)", equals: expected.question)
            try await Self.expect(client, "/questions/FAD10000%E2%80%A6000000000001?as-of=\(text)", equals: expected.question)
            try await Self.expect(client, "/subjects/kid-ava/permissions?require=camera,microphone&as-of=\(text)", equals: expected.permissions)
            let stats = QueryJSON.statisticsResult(try await ledger.statistics(asOf: point))
            try await Self.expect(client, "/stats?as-of=\(text)", equals: stats)
        }
    }

    @Test func historyEqualsTheToolsJSON() async throws {
        try await Self.withFamilyDay { client, ledger in
            let events = try ledger.read(asOf: .seq(600)) { view in
                var events: [String] = []
                try view.forEachEvent(after: 99, through: 600) { event in
                    if event.subject == "kid-ben", event.type == .permissionChanged { events.append(EventJSON.encode(event)) }
                }
                return events
            }
            let expected = #"{"events":["# + events.joined(separator: ",") + "]}"
            try await Self.expect(client, "/history?subject=kid-ben&type=permission.changed&from=seq:100&to=seq:600", equals: expected)
            try await Self.expect(client, "/history?subject=kid-ben&type=permission.changed&from=seq:100&as-of=seq:600", equals: expected)
        }
    }

    @Test(arguments: [
        ("/questions?as-of=yesterday", "as-of: "),
        ("/questions?as-of=seq:x", "as-of: "),
        ("/questions?as-of=seq:99999999999999999999", "as-of: "),
        ("/questions?state=bogus", "state: "),
        ("/questions?asof=seq:1", "unknown parameter"),
        ("/subjects/kid-ava/permissions?require=camera,,microphone", "require: "),
        ("/subjects/kid-ava/permissions?require=camra", "require: "),
        ("/questions/not-a-question", "is not a question id"),
        ("/history?to=seq:5&as-of=seq:5", "to and as-of"),
        ("/history?type=question.pondered", "type: "),
    ])
    func aBadParameterIs400(uri: String, saying prefix: String) async throws {
        try await Self.withFamilyDay { client, _ in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .badRequest, "\(uri)")
            let error = try #require(response.json["error"] as? String)
            #expect(error.contains(prefix), "\(uri): \(error)")
        }
    }

    @Test(arguments: [
        "/questions/00000000-0000-4000-8000-000000000000",
        "/questions/FAD10000-0000-4000-8000-000000000375?as-of=seq:1",
        "/questions?as-of=seq:5000",
    ])
    func whatDoesNotExistIs404(uri: String) async throws {
        try await Self.withFamilyDay { client, _ in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .notFound, "\(uri): \(response.text)")
            #expect(response.json["error"] as? String != nil)
        }
    }

    @Test func aSubjectIsPercentDecoded() async throws {
        try await TestLedger.with { test in
            let line = #"{"type":"permission.changed","id":"p1","subject":"kid zoë/2","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:00Z","permission":"camera","state":"authorized"}"#
            try await test.ledger.append([try #require(try EventJSON.decode(line: line))])
            let app = LedgerServer.application(ledger: test.ledger, configuration: .init(), logger: Logger(label: "test"))
            try await app.test(.router) { client in
                let response = try await client.execute(uri: "/subjects/kid%20zo%C3%AB%2F2/permissions?as-of=seq:1", method: .get)
                #expect(response.status == .ok)
                #expect(response.text.contains(#""subject":"kid zoë/2""#))
                #expect(response.text.contains(#""state":"authorized""#))
            }
        }
    }
}
