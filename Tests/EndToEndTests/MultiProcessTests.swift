import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// Several processes on one ledger: the audit tool reads while this process writes through the library,
/// and a reader killed inside its read transaction leaves a slot that the next open clears.
@Suite(.timeLimit(.minutes(10))) struct MultiProcessTests {
    /// Starts an export into a pipe nobody drains: it blocks in its write, inside its read transaction.
    static func blockedReader(_ ledger: String) throws -> Process {
        let process = Process()
        process.executableURL = Tool.executable
        process.arguments = ["export", "--ledger", ledger]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try spawn(process)
        // Its first bytes prove the transaction began; then it fills the pipe and blocks.
        let first = try #require(try pipe.fileHandleForReading.read(upToCount: 1))
        #expect(first == Data("{".utf8))
        return process
    }

    @Test func aReaderKilledInsideItsTransactionLeavesASlotThatTheNextOpenClears() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            // LMDB resets the reader table when no process has the ledger open, so a stale slot matters
            // (and is counted) only while another process keeps it open: the survivor.
            let survivor = try Self.blockedReader(ledger)
            let victim = try Self.blockedReader(ledger)
            defer {
                kill(survivor.processIdentifier, SIGKILL)
                survivor.waitUntilExit()
            }
            Thread.sleep(forTimeInterval: 0.3)
            #expect(victim.isRunning && survivor.isRunning, "the exports should be blocked on their full pipes")
            kill(victim.processIdentifier, SIGKILL)
            victim.waitUntilExit()
            #expect(victim.terminationReason == .uncaughtSignal)

            let reopened = try Ledger(path: ledger, options: .init(readOnly: true))
            #expect(reopened.staleReadersCleared == 1)
            #expect(try reopened.verify().isIntact)
        }
    }

    /// Reads keep the head of the snapshot they last read: another process's appends make a new snapshot,
    /// so this process's next read sees the new head and the new events at once.
    @Test func readsSeeAnotherProcesssAppendsAtOnce() throws {
        try withSandbox { sandbox in
            let path = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let ledger = try Ledger(path: path, options: .init(readOnly: true))
            let before = try ledger.head()
            #expect(try ledger.read { $0.head } == before)
            let later = sandbox.path("later.jsonl")
            try Data((0..<3).map { n in
                #"{"type":"permission.changed","id":"later-\#(n)","subject":"kid-ava","occurredAt":"2026-11-21T09:00:0\#(n)Z","recordedAt":"2026-11-21T09:00:0\#(n)Z","permission":"camera","state":"denied"}"# + "\n"
            }.joined().utf8).write(to: URL(fileURLWithPath: later))
            let imported = try sandbox.run(["import", "--ledger", path, later])
            #expect(imported.status == 0, "\(imported)")
            let after = try ledger.head()
            #expect(after.seq == before.seq + 3 && after.hash != before.hash)
            #expect(try ledger.read(asOf: .seq(after.seq)) { $0.point.seq } == after.seq)
            var last: UInt64 = 0
            try ledger.forEachEvent { last = $0.seq ?? 0 }
            #expect(last == after.seq)
        }
    }

    /// This process's writes carry what they learned of the tables (a pending question's definition) from
    /// one transaction to the next, but only while no other write comes in between: after another process
    /// answers the question, this process must see it answered, not pending as its last write left it.
    @Test func anotherProcesssWriteBetweenTwoOfOursIsSeenByTheSecond() async throws {
        try await withSandboxAsync { sandbox in
            let path = sandbox.path("shared")
            let ledger = try Ledger(path: path, options: .init(durable: false))
            let question = "FAD10000-0000-4000-8000-0000000000AA"
            func event(_ json: String) throws -> PermissionEvent { try #require(try EventJSON.decode(line: json)) }
            let asked = try event(#"{"type":"question.asked","id":"mp-1","subject":"kid-ben","occurredAt":"2026-11-20T07:00:00Z","question":{"id":"\#(question)","topic":{"significantAppUpdate":{"description":"A new page."}}}}"#)
            // Two writes of ours, so the second starts from the first's cache with the question pending.
            try ledger.appendSynchronously([asked])
            try ledger.appendSynchronously([try event(#"{"type":"permission.changed","id":"mp-2","subject":"kid-ben","occurredAt":"2026-11-20T07:00:01Z","permission":"camera","state":"denied"}"#)])

            let approval = sandbox.path("approval.jsonl")
            try Data((#"{"type":"question.answered","id":"mp-3","subject":"kid-ben","occurredAt":"2026-11-20T07:01:00Z","questionId":"\#(question)","choiceId":"approve"}"# + "\n").utf8)
                .write(to: URL(fileURLWithPath: approval))
            let imported = try sandbox.run(["import", "--ledger", path, approval])
            #expect(imported.status == 0, "\(imported)")

            let denial = try event(#"{"type":"question.answered","id":"mp-4","subject":"kid-ben","occurredAt":"2026-11-20T07:02:00Z","questionId":"\#(question)","choiceId":"decline"}"#)
            let rejected = #expect(throws: AppendRejected.self) { try ledger.appendSynchronously([denial]) }
            #expect(rejected?.description.contains("already answered") == true, "\(String(describing: rejected))")
            // The writer thread's groups check the same way.
            await #expect(throws: AppendRejected.self) { try await ledger.append(denial) }
            #expect(try ledger.head().seq == 3)
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test func theAuditToolReadsWhileThisProcessAppends() async throws {
        try await withSandboxAsync { sandbox in
            let path = sandbox.path("live")
            let ledger = try Ledger(path: path, options: .init(durable: false))
            let finished = Flag()
            let writer = Task {
                defer { finished.set() }
                for n in 0..<400 {
                    let handle = try CommunicationHandle(value: "friend-\(n)", kind: .custom)
                    try await ledger.subject("kid-\(n % 4)").recordKnownHandles([handle], among: [handle], at: try Timestamp(rfc3339: "2026-11-20T09:00:00Z"))
                }
            }
            var reads = 0
            while !finished.isSet || reads < 3 {
                let result = try sandbox.run(["verify", "--ledger", path, "--format", "json"])
                #expect(result.status == 0, "\(result)")
                let json = try result.json()
                #expect(json["ok"] as? Bool == true, "\(result)")
                reads += 1
                if reads > 200 { break }
            }
            try await writer.value
            #expect(try ledger.head().seq == 400)
            let final = try sandbox.json(["known-handles", "--ledger", path, "--subject", "kid-1"])
            #expect(try final.objects("handles").count == 100)
        }
    }
}

/// `export --follow`: a subscription in another process than the writers.
@Suite(.timeLimit(.minutes(10))) struct FollowTests {
    /// Reads lines from `handle` until `count` have arrived or five minutes have passed: a deadline for a hang,
    /// not for speed (the writer's imports, each flushed to disk, may be slow on a loaded machine).
    static func readLines(_ handle: FileHandle, count: Int) -> [String] {
        var buffer = Data()
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(300)
        while lines.count < count, Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }  // end of file: the follower exited
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                buffer.removeSubrange(buffer.startIndex...newline)
            }
        }
        return lines
    }

    @Test func aFollowerStartedWhileAnotherProcessImportsSeesEveryEventOnceInOrder() throws {
        let tool = try #require(Tool.executable)
        try withSandbox { sandbox in
            let lines = try fixtureEventLines("family-day.jsonl")
            let chunks = try sandbox.chunks(of: lines, size: 50)
            let ledger = try sandbox.ledger(importing: chunks[0])

            // The writer imports the other chunks one after another, one transaction each.
            let writer = try sandbox.importer(chunks.dropFirst(), into: ledger)
            try spawn(writer)

            // The follower starts while the writer is under way, from the beginning of the log.
            let follower = Process()
            follower.executableURL = tool
            follower.arguments = ["export", "--ledger", ledger, "--follow", "--poll", "0.05"]
            let pipe = Pipe()
            follower.standardOutput = pipe
            follower.standardError = FileHandle.nullDevice
            try spawn(follower)
            let followed = Self.readLines(pipe.fileHandleForReading, count: lines.count)
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
            #expect(follower.isRunning, "--follow keeps running after the last event")
            follower.terminate()
            follower.waitUntilExit()

            // Exactly the log, in order, once: the same bytes as a plain export afterwards.
            #expect(followed.count == lines.count)
            let exported = try sandbox.export(ledger)
            #expect(followed.joined(separator: "\n") + "\n" == String(decoding: exported, as: UTF8.self))
        }
    }

    @Test func followRejectsANonsensePollInterval() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let run = try sandbox.run(["export", "--ledger", ledger, "--follow", "--poll", "0"])
            #expect(run.status == 2, "\(run)")
            #expect(run.err.contains("--poll"), "\(run)")
        }
    }
}
