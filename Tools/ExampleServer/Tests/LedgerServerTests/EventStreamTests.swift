import Foundation
import LedgerServer
import PermissionLedger
import Testing

/// `GET /events/stream`: server-sent events of the log, caught up then live, on a live server.
@Suite(.timeLimit(.minutes(1))) struct EventStreamTests {
    /// The `(id, data)` of every message in a response's text (chunk framing lines are skipped). Lines are
    /// split on bytes: a `\r\n` of the chunk framing is one `Character`, which a split on `"\n"` would miss.
    static func messages(in text: String) -> [(id: UInt64, data: String)] {
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        return lines.indices.dropLast().compactMap { i in
            guard lines[i].hasPrefix("id: "), let id = UInt64(lines[i].dropFirst(4)), lines[i + 1].hasPrefix("data: ") else { return nil }
            return (id, String(lines[i + 1].dropFirst(6)))
        }
    }

    static func request(_ target: String, headers: [String] = []) -> String {
        (["GET \(target) HTTP/1.1", "Host: localhost"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
    }

    @Test func theStreamCatchesUpThenDeliversAppendedEventsWithTheirSeqs() async throws {
        try await TestLedger.with { test in
            let events = try Fixtures.events("time-limited.jsonl")
            let ledger = test.ledger
            try await ledger.append(Array(events[0..<3]))
            let (text, exported) = try await RunningServer.with(ledger: ledger) { port, _ in
                var appendedLive = false
                let text = try await RawConnection.exchange(port: port, request: Self.request("/events/stream?after=1")) { text in
                    if !appendedLive, text.contains("id: 3\n") {
                        appendedLive = true
                        try await ledger.append(Array(events[3..<5]))
                    }
                    return text.contains("id: 5\n")
                }.text
                // Read before the server's shutdown closes the ledger.
                return (text, try ledger.exportedLines())
            }
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.lowercased().contains("content-type: text/event-stream"))
            let messages = Self.messages(in: text)
            #expect(messages.map(\.id) == [2, 3, 4, 5])
            #expect(messages.map(\.data) == Array(exported[1..<5]))
        }
    }

    @Test func lastEventIDTakesThePlaceOfAfter() async throws {
        try await TestLedger.with { test in
            try await test.ledger.append(try Fixtures.events("time-limited.jsonl"))
            let text = try await RunningServer.with(ledger: test.ledger) { port, _ in
                try await RawConnection.exchange(
                    port: port, request: Self.request("/events/stream?after=1", headers: ["Last-Event-ID: 5"])
                ) { $0.contains("id: 7\n") }.text
            }
            #expect(Self.messages(in: text).map(\.id) == [6, 7])
        }
    }

    @Test func aSubjectFilterKeepsThatSubjectsEventsOnly() async throws {
        try await TestLedger.with { test in
            let other = #"{"type":"permission.changed","id":"zoe-1","subject":"kid-zoe","occurredAt":"2026-11-20T11:00:00Z","permission":"camera","state":"denied"}"#
            try await test.ledger.append(try Fixtures.events("time-limited.jsonl") + [try #require(try EventJSON.decode(line: other))])
            let text = try await RunningServer.with(ledger: test.ledger) { port, _ in
                try await RawConnection.exchange(port: port, request: Self.request("/events/stream?after=0&subject=kid-zoe")) {
                    $0.contains("id: 8\n")
                }.text
            }
            let messages = Self.messages(in: text)
            #expect(messages.map(\.id) == [8])
            #expect(messages.first?.data.contains(#""id":"zoe-1""#) == true)
        }
    }

    @Test func aBadAfterIs400() async throws {
        try await TestLedger.with { test in
            let text = try await RunningServer.with(ledger: test.ledger) { port, _ in
                try await RawConnection.exchange(port: port, request: Self.request("/events/stream?after=-1")) {
                    $0.contains("\r\n\r\n{")
                }.text
            }
            #expect(text.hasPrefix("HTTP/1.1 400"))
            #expect(text.contains("after: "))
        }
    }
}
