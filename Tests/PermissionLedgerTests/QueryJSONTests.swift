import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// The JSON shapes of docs/spec/CLI.md, as ``QueryJSON`` writes them.
@Suite struct QueryJSONTests {
    @Test func questionResult() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            let json = try ledger.read(asOf: .seq(2)) { view in
                QueryJSON.questionResult(try #require(try view.question(QID.uuid("6A3F1C2E-0001-4000-8000-000000000001"))), at: view.point)
            }
            #expect(json == #"{"asOf":{"seq":2,"time":"2026-11-20T09:05:02Z"},"question":{"id":"6A3F1C2E-0001-4000-8000-000000000001","subject":"kid-ava","topic":"communication","handles":[{"value":"dragonslayer42","kind":"custom"}],"description":null,"actions":["message","audioCall"],"state":"approved","late":false,"askedAt":"2026-11-20T09:00:00Z","resolvedAt":"2026-11-20T09:05:00Z","expiresAt":"2026-11-21T09:00:00Z","choice":{"id":"approve","title":"Approve","answer":"approval"},"via":"messages","error":null,"events":[{"seq":1,"type":"question.asked","id":"approval-01","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z"},{"seq":2,"type":"question.answered","id":"approval-02","occurredAt":"2026-11-20T09:05:00Z","recordedAt":"2026-11-20T09:05:02Z"}]}}"#)
        }
    }

    @Test func questionsResultForAFailedUpdateQuestion() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("ask-failed.jsonl")
            let json = try ledger.read(asOf: .seq(6)) { view in
                QueryJSON.questionsResult(try view.questions(state: .failed).filter { $0.question.topic.name == "significantAppUpdate" }, at: view.point)
            }
            #expect(json == #"{"asOf":{"seq":6,"time":"2026-11-20T13:10:03Z"},"questions":[{"id":"6A3F1C2E-0004-4000-8000-000000000003","subject":"kid-cleo","topic":"significantAppUpdate","handles":[],"description":"Version 3.0 adds open chat rooms.","actions":[],"state":"failed","late":false,"askedAt":"2026-11-20T13:10:00Z","resolvedAt":"2026-11-20T13:10:02Z","expiresAt":null,"choice":null,"via":null,"error":{"code":"invalidQuestion","message":null}}]}"#)
        }
    }

    @Test func knownHandlesResult() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("handles-observed.jsonl")
            let json = try ledger.read(asOf: .seq(4)) { view in
                QueryJSON.knownHandlesResult(try view.knownHandles(subject: "kid-ben"), subject: "kid-ben", at: view.point)
            }
            #expect(json == #"{"asOf":{"seq":4,"time":"2026-11-20T11:00:01Z"},"subject":"kid-ben","handles":[{"value":"+15550107788","kind":"phoneNumber","since":"2026-11-20T10:30:00Z","until":null,"source":{"observation":3}},{"value":"5550104477","kind":"phoneNumber","since":"2026-11-20T10:05:00Z","until":null,"source":{"question":"6A3F1C2E-000D-4000-8000-000000000001"}}]}"#)
        }
    }

    @Test func permissionsResultWithAndWithoutRequire() async throws {
        try await withLedger { ledger async throws in
            var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T08:10:00Z"))
            s.permission(.microphone, .authorized, cause: .systemPrompt)
            s.advance(by: .seconds(600))
            s.permission(.camera, .askAgain)
            try await ledger.append(s.events)
            let (permissions, point) = try ledger.read(asOf: .seq(2)) { (try $0.permissions(subject: "kid-ava"), $0.point) }
            let body = #"{"asOf":{"seq":2,"time":"2026-11-20T08:20:01Z"},"subject":"kid-ava","permissions":[{"permission":"camera","state":"askAgain","since":"2026-11-20T08:20:00Z","canPrompt":true,"cause":null},{"permission":"microphone","state":"authorized","since":"2026-11-20T08:10:00Z","canPrompt":false,"cause":"systemPrompt"}]"#
            #expect(QueryJSON.permissionsResult(permissions, subject: "kid-ava", at: point, require: nil) == body + "}")
            #expect(QueryJSON.permissionsResult(permissions, subject: "kid-ava", at: point, require: [.microphone, .camera, .contacts, .camera])
                == body + #","require":{"satisfied":false,"missing":["camera","contacts"]}}"#)
            #expect(QueryJSON.permissionsResult(permissions, subject: "kid-ava", at: point, require: [.microphone])
                == body + #","require":{"satisfied":true,"missing":[]}}"#)
        }
    }

    @Test func asOf() async throws {
        try await withLedger { ledger async throws in
            let point = try ledger.read(asOf: .time(try time("2026-11-20T10:00:00.5+01:00"))) { $0.point }
            #expect(QueryJSON.asOf(point) == #"{"seq":0,"time":"2026-11-20T09:00:00.500000Z"}"#)
        }
    }

    @Test
    func asOfSeqZeroWritesAValidTimeOrNull() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            let json = try ledger.read(asOf: .seq(0)) { QueryJSON.asOf($0.point) }
            let prefix = #"{"seq":0,"time":"#
            #expect(json.hasPrefix(prefix))
            let value = json.dropFirst(prefix.count).dropLast()
            if value != "null" {
                #expect(value.hasPrefix("\"") && value.hasSuffix("\""))
                #expect((try? Timestamp(rfc3339: String(value.dropFirst().dropLast()))) != nil, "\(json)")
            }
        }
    }
}
