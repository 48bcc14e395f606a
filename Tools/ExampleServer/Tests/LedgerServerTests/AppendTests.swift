import Foundation
import Hummingbird
import HummingbirdTesting
import LedgerServer
import Logging
import PermissionLedger
import Testing

/// `POST /events`: JSON Lines in, all or nothing.
@Suite struct AppendTests {
    static func application(_ ledger: Ledger, maxBodyBytes: Int = 16 << 20) -> some ApplicationProtocol {
        LedgerServer.application(ledger: ledger, configuration: .init(maxBodyBytes: maxBodyBytes), logger: Logger(label: "test"))
    }

    @Test func goodLinesAreAppendedAndQueryable() async throws {
        try await TestLedger.with { test in
            try await Self.application(test.ledger).test(.router) { client in
                let response = try await client.execute(
                    uri: "/events", method: .post, body: ByteBuffer(string: try Fixtures.text("time-limited.jsonl")))
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(response.json["appended"] as? Int == 7)
                #expect(response.json["duplicates"] as? Int == 0)
                #expect((response.json["head"] as? [String: Any])?["seq"] as? Int == 7)
                #expect((response.json["head"] as? [String: Any])?["hash"] as? String == (try test.ledger.head().hash.description))

                let handles = try await client.execute(uri: "/subjects/kid-ben/known-handles?as-of=seq:7", method: .get)
                let expected = try test.ledger.read(asOf: .seq(7)) { view in
                    QueryJSON.knownHandlesResult(try view.knownHandles(subject: "kid-ben"), subject: "kid-ben", at: view.point)
                }
                #expect(handles.status == .ok)
                #expect(handles.text == expected + "\n")
            }
            #expect(try test.ledger.exportedLines().count == 7)
        }
    }

    @Test func theSameEventsAgainAreDuplicates() async throws {
        try await TestLedger.with { test in
            try await Self.application(test.ledger).test(.router) { client in
                let body = ByteBuffer(string: try Fixtures.text("time-limited.jsonl"))
                _ = try await client.execute(uri: "/events", method: .post, body: body)
                let again = try await client.execute(uri: "/events", method: .post, body: body)
                #expect(again.status == .ok)
                #expect(again.json["appended"] as? Int == 0)
                #expect(again.json["duplicates"] as? Int == 7)
            }
        }
    }

    @Test func aMalformedLineIs400NamingItAndNothingIsStored() async throws {
        let good = try Fixtures.text("time-limited.jsonl").split(separator: "\n").first { $0.hasPrefix("{") }!
        let body = """
            \(good)
            {"type":"question.asked",
            # a comment, then a blank line

            {"type":"permission.changed","id":"p1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"authorized","colour":"red"}

            """
        try await TestLedger.with { test in
            try await Self.application(test.ledger).test(.router) { client in
                let response = try await client.execute(uri: "/events", method: .post, body: ByteBuffer(string: body))
                #expect(response.status == .badRequest)
                let error = try #require(response.json["error"] as? String)
                #expect(error.hasPrefix("line 2: "))
                let problems = try #require(response.json["problems"] as? [String])
                #expect(problems.count == 2)
                #expect(problems.first == error)
                #expect(problems.last?.hasPrefix("line 5: permission.changed: ") == true)
                #expect(problems.last?.contains("colour") == true)
            }
            #expect(try test.ledger.head().seq == 0)
        }
    }

    @Test func aRejectedEventIs422NamingItsLineAndNothingIsStored() async throws {
        let lines = try Fixtures.text("time-limited.jsonl").split(separator: "\n").filter { $0.hasPrefix("{") }
        // The first question, a blank line, then the third event: an answer to the second question, not yet asked.
        let body = "\(lines[0])\n\n\(lines[3])\n"
        try await TestLedger.with { test in
            try await Self.application(test.ledger).test(.router) { client in
                let response = try await client.execute(uri: "/events", method: .post, body: ByteBuffer(string: body))
                #expect(response.status == .unprocessableContent)
                let error = try #require(response.json["error"] as? String)
                #expect(error.hasPrefix("line 3: question.answered: "))
                #expect((response.json["rejections"] as? [String])?.count == 1)
            }
            #expect(try test.ledger.head().seq == 0)
        }
    }

    @Test func aBodyAboveTheLimitIs413() async throws {
        try await TestLedger.with { test in
            try await Self.application(test.ledger, maxBodyBytes: 100).test(.router) { client in
                let response = try await client.execute(
                    uri: "/events", method: .post, body: ByteBuffer(string: try Fixtures.text("time-limited.jsonl")))
                #expect(response.status == .contentTooLarge)
                #expect(response.json["error"] as? String != nil)
            }
            #expect(try test.ledger.head().seq == 0)
        }
    }

    @Test func aClosedLedgerIs503() async throws {
        try await TestLedger.with { test in
            await test.ledger.close()
            try await Self.application(test.ledger).test(.router) { client in
                let response = try await client.execute(
                    uri: "/events", method: .post, body: ByteBuffer(string: try Fixtures.text("time-limited.jsonl")))
                #expect(response.status == .serviceUnavailable)
                let query = try await client.execute(uri: "/questions", method: .get)
                #expect(query.status == .serviceUnavailable)
            }
        }
    }
}
