import Foundation
import Hummingbird
import LedgerServer
import PermissionLedger
import Testing

/// Graceful shutdown: the server ends its streams and finishes its requests, then the ledger is closed.
@Suite(.timeLimit(.minutes(1))) struct ShutdownTests {
    @Test func gracefulShutdownEndsTheStreamsThenClosesTheLedger() async throws {
        try await TestLedger.with { test in
            try await test.ledger.append(try Fixtures.events("time-limited.jsonl"))
            let path = test.path
            let ledger = test.ledger
            let result = try await RunningServer.with(ledger: ledger) { port, group in
                var triggered = false
                return try await RawConnection.exchange(port: port, request: EventStreamTests.request("/events/stream")) { text in
                    if !triggered, text.contains("id: 7\n") {
                        triggered = true
                        #expect(!ledger.isClosed)
                        await group.triggerGracefulShutdown()
                    }
                    return false
                }
            }
            // The stream was finished, not cut: the chunked body's last chunk arrived before the server closed.
            #expect(result.closedByServer)
            #expect(result.text.hasSuffix("0\r\n\r\n"))
            #expect(ledger.isClosed)
            // The files were released: the ledger opens again in this process.
            let reopened = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try reopened.head().seq == 7)
            await reopened.close()
        }
    }

    @Test func aRequestInFlightIsAnsweredAndDurableBeforeTheLedgerCloses() async throws {
        try await TestLedger.with { test in
            let body = try Fixtures.text("time-limited.jsonl")
            let half = body.utf8.count / 2
            let head = "POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            let ledger = test.ledger
            let path = test.path
            let result = try await RunningServer.with(ledger: ledger) { port, group in
                try await RawConnection.exchange(port: port, send: { writer in
                    try await writer.write(ByteBuffer(string: head + String(decoding: body.utf8.prefix(half), as: UTF8.self)))
                    // The server is reading the body when the shutdown begins: it must finish this request.
                    try await Task.sleep(for: .milliseconds(300))
                    Task { await group.triggerGracefulShutdown() }
                    try await Task.sleep(for: .milliseconds(300))
                    try await writer.write(ByteBuffer(string: String(decoding: body.utf8.dropFirst(half), as: UTF8.self)))
                }, until: { _ in false })
            }
            #expect(result.text.hasPrefix("HTTP/1.1 200"))
            #expect(result.text.contains(#""appended":7"#))
            #expect(result.closedByServer)
            #expect(ledger.isClosed)
            let reopened = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try reopened.head().seq == 7)
            await reopened.close()
        }
    }

    @Test func requestsAfterTheLedgerClosedAre503() async throws {
        try await TestLedger.with { test in
            let ledger = test.ledger
            try await RunningServer.with(ledger: ledger) { port, _ in
                await ledger.close()
                let line = #"{"type":"permission.changed","id":"p1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"denied"}"#
                let request = "POST /events HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(line.utf8.count)\r\n\r\n\(line)"
                let text = try await RawConnection.exchange(port: port, request: request) { $0.contains("}\n") }.text
                #expect(text.hasPrefix("HTTP/1.1 503"))
            }
        }
    }
}
