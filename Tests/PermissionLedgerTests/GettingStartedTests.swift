import Foundation
import PermissionLedger
import PermissionModel
import Testing

// Mirrors the article Sources/PermissionLedger/Documentation.docc/GettingStarted.md: every Swift
// listing of the article is here, in the article's order and with the same code (marked
// `// Listing: <section>`), except that the ledger lives in a temporary directory
// (`directory + "/family.ledger"` where the article says "family.ledger") and the first listing's
// imports are this file's; `everyListingStandsHereAsWritten` checks it. The values the article shows in
// comments (`// true`, `// .pending`, ...) and the claims of its prose are #expects. Change the article
// and this file together.

@Suite(.timeLimit(.minutes(10))) struct GettingStartedTests {
    /// What the article's `handle(_:)` stands for: the app's own code, given each response.
    final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [RecordedResponse] = []
        func handle(_ response: RecordedResponse) { lock.withLock { received.append(response) } }
        var responses: [RecordedResponse] { lock.withLock { received } }
    }

    /// Waits until `condition` holds, for at most a minute.
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        // A deadline, not a count of tries: on a loaded machine each try may take far longer than its sleep.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test func theArticleStepByStep() async throws {
        try await withTemporaryDirectory { directory in
            // Listing: Open a ledger
            let ledger = try await Ledger.open(path: directory + "/family.ledger")

            #expect(try ledger.head() == .empty)
            // The directory is private to the user: mode 0700.
            let mode = try FileManager.default.attributesOfItem(atPath: directory + "/family.ledger")[.posixPermissions] as? Int
            #expect(mode == 0o700)
            let fileMode = try FileManager.default.attributesOfItem(atPath: directory + "/family.ledger/data.mdb")[.posixPermissions] as? Int
            #expect(fileMode == 0o600)

            // Listing: Record what PermissionKit reports
            let child = ledger.subject("kid-1")
            let friend = try CommunicationHandle.phoneNumber("+1 (415) 555-0100")
            let question = try PermissionQuestion(handle: friend)

            // The app asks (AskCenter.shared.ask): record it.
            try await child.recordAsk(question)

            // The same call again (a retry after a timeout, say) is a no-op.
            let retry = try await child.recordAsk(question)    // .duplicate(of: 1)

            #expect(retry == .duplicate(of: 1))
            #expect(friend.value == "+14155550100")
            #expect(friend == (try CommunicationHandle(value: "+1 (415) 555-0100", kind: .phoneNumber)))
            // A retry with another time is the same ask too.
            #expect(try await child.recordAsk(question, at: Timestamp(Date().addingTimeInterval(-60))) == .duplicate(of: 1))
            #expect(try ledger.head().seq == 1)

            // Listing: Record what PermissionKit reports (the response)
            // The guardian approves (AskCenter.shared.responses(for:) delivers it): record it.
            try await child.recordResponse(to: question.id, choice: .approve)

            #expect(try ledger.head().seq == 2)

            // Listing: Record what PermissionKit reports (a rejected event)
            do {
                try await child.recordSendCanceled(question.id)
            } catch let rejected as AppendRejected {
                print(rejected)   // event 1: question.sendCanceled: question … is no longer pending (it is approved); …
            }

            do {
                try await child.recordSendCanceled(question.id)
                Issue.record("the cancel of an answered question was accepted")
            } catch let rejected as AppendRejected {
                #expect(rejected.description.hasPrefix("event 1: question.sendCanceled: question \(question.id.uuidString) is no longer pending (it is approved);"))
            }
            #expect(try ledger.head().seq == 2)

            // Listing: Handle errors
            do {
                try await child.recordPermission(.camera, state: .authorized, cause: .settings)
            } catch let rejected as AppendRejected {
                print(rejected.rejections.map(\.rejection.reason))   // fix the event; do not retry it as it is
            } catch let error as LedgerError {
                switch error.kind {
                case .closed, .readOnly: print("open the ledger (for writing) again: \(error)")
                case .storage, .damaged: print("check it with verify(), restore a backup: \(error)")
                default: print(error)
                }
            }

            #expect(try ledger.head().seq == 3)
            #expect(try await child.permission(.camera)?.state == .authorized)

            // Listing: Ask CommunicationLimits-style questions
            let stranger = try CommunicationHandle.emailAddress("Stranger@Example.com")

            let isKnown = try await child.isKnownHandle(friend)                 // true
            let known = try await child.knownHandles(in: [friend, stranger])    // [friend]
            for handle in try await child.knownHandles() {
                print(handle.handle.value, handle.since, handle.until as Any, handle.source)
                // +14155550100 2026-11-20T09:05:00.123456Z nil question(…)
            }

            #expect(isKnown)
            #expect(known == [friend])
            #expect(try await ledger.subject("kid-2").isKnownHandle(friend) == false)
            let handles = try await child.knownHandles()
            #expect(handles.map(\.handle) == [friend])
            #expect(handles.first?.until == nil)
            #expect(handles.first?.source == .question(question.id))
            #expect(stranger.value == "stranger@example.com")

            // Listing: Look back: as of a point
            let status = try await ledger.question(question.id)             // as of now
            let state = status?.state                                        // .approved
            let history = status?.events.map(\.type)                         // [.questionAsked, .questionAnswered]

            #expect(state == .approved)
            #expect(history == [.questionAsked, .questionAnswered])
            #expect(status?.choice == .approve)
            #expect(status?.via == .messages)
            #expect(status?.askedAt == status?.events[0].occurredAt, "recorded without at:, at the clock")

            // Listing: Look back: as of a point (seq)
            let askSeq = status!.events[0].seq                                                 // 1
            let thenState = try await ledger.question(question.id, asOf: .seq(askSeq))?.state   // .pending
            let thenKnown = try await child.isKnownHandle(friend, asOf: .seq(askSeq))          // false
            let before = try await ledger.question(question.id, asOf: .seq(0))                 // nil

            #expect(askSeq == 1)
            #expect(thenState == .pending)
            #expect(thenKnown == false)
            #expect(before == nil)
            #expect(try await ledger.question(question.id, asOf: .seq(askSeq))?.events.count == 1)
            // A point beyond the head is an error, not an empty answer.
            let beyond = await #expect(throws: LedgerError.self) { try await ledger.question(question.id, asOf: .seq(4)) }
            #expect(beyond?.kind == .notFound)

            // Listing: Look back: as of a point (time)
            let answerRecordedAt = status!.events[1].recordedAt
            let justBefore = Timestamp(microseconds: answerRecordedAt.microseconds - 1)
            let stateJustBefore = try await ledger.question(question.id, asOf: .time(justBefore))?.state     // .pending
            let stateAtAnswer = try await ledger.question(question.id, asOf: .time(answerRecordedAt))?.state // .approved

            #expect(stateJustBefore == .pending)
            #expect(stateAtAnswer == .approved)

            // Listing: Look back: several queries in one snapshot
            let (stateThen, knownThen) = try ledger.read(asOf: .seq(askSeq)) { view in
                (try view.question(question.id)?.state, try view.isKnownHandle(friend, subject: "kid-1"))
            }

            #expect(stateThen == .pending)
            #expect(knownThen == false)

            // Listing: Look back: expiry by the clock
            let tomorrow = Timestamp(Date().addingTimeInterval(24 * 3600))
            let expiring = try PermissionQuestion(handle: stranger, expiresAt: tomorrow)
            try await child.recordAsk(expiring)

            let now = try await ledger.question(expiring.id)?.state                          // .pending
            let thenByClock = try await ledger.question(expiring.id, asOf: .time(tomorrow))?.state  // .expired

            #expect(now == .pending)
            #expect(thenByClock == .expired)
            // Nothing was written for it: the clock alone expires it in the answer.
            #expect(try await ledger.question(expiring.id, asOf: .time(tomorrow))?.events.map(\.type) == [.questionAsked])
            #expect(try ledger.head().seq == 4)

            // Listing: Follow responses as they arrive
            let inbox = Inbox()
            func handle(_ response: RecordedResponse) { inbox.handle(response) }

            let listener = Task {
                for try await response in child.responses() {
                    handle(response)   // response.question, .choice, .via, .late, .recordedAt, .seq
                }
            }
            // ... when the app no longer needs the updates:
            // listener.cancel()

            // The response already recorded comes first...
            #expect(try await Self.eventually { inbox.responses.count == 1 })
            #expect(inbox.responses.first?.question.id == question.id)
            #expect(inbox.responses.first?.choice == .approve)
            #expect(inbox.responses.first?.seq == 2)
            #expect(inbox.responses.first?.late == false)
            // ... then each new one as it is committed.
            try await child.recordResponse(to: expiring.id, choice: .decline)
            #expect(try await Self.eventually { inbox.responses.count == 2 })
            #expect(inbox.responses.last?.question.id == expiring.id)
            #expect(inbox.responses.last?.choice == .decline)
            // Another subject's responses do not reach this subscription.
            let other = try PermissionQuestion(handle: friend)
            try await ledger.subject("kid-2").recordAsk(other)
            try await ledger.subject("kid-2").recordResponse(to: other.id, choice: .approve)
            // Cancelling the task ends the loop.
            listener.cancel()
            try await listener.value
            #expect(inbox.responses.count == 2)
            // Resuming after the last response handled delivers nothing again.
            let afterLast = child.responses(after: inbox.responses.last!.seq)
            let resumed = Task {
                var count = 0
                for try await _ in afterLast { count += 1 }
                return count
            }
            try await Task.sleep(for: .milliseconds(100))
            resumed.cancel()
            #expect(try await resumed.value == 0)

            // A question that is overdue by the time the sweeps start.
            // Asked at a time given, not read off the clock when the append runs, which a loaded machine may delay
            // past the expiry.
            let askedAt = Date()
            let shortLived = try PermissionQuestion(handle: stranger, expiresAt: Timestamp(askedAt.addingTimeInterval(0.2)))
            try await child.recordAsk(shortLived, at: Timestamp(askedAt))
            try await Task.sleep(for: .milliseconds(300))

            // Listing: Expire overdue questions
            func startExpirySweeps(of ledger: Ledger, every interval: Duration = .seconds(60)) -> Task<Void, any Error> {
                Task {
                    while true {
                        try await ledger.expireOverdueQuestions()
                        try await Task.sleep(for: interval)   // throws CancellationError once the task is cancelled
                    }
                }
            }

            let sweeps = startExpirySweeps(of: ledger)
            // ... when the app shuts down:
            // sweeps.cancel()

            // The first sweep runs at once.
            #expect(try await Self.eventually {
                try await ledger.question(shortLived.id)?.events.last?.type == .questionExpired
            })
            sweeps.cancel()
            await #expect(throws: CancellationError.self) { try await sweeps.value }
            let expired = try #require(try await ledger.question(shortLived.id))
            #expect(expired.state == .expired)
            #expect(expired.events.last?.id == "expired:\(shortLived.id.uuidString)")
            #expect(expired.events.last?.occurredAt == shortLived.expiresAt)
            // Written once: a second sweep finds nothing due.
            #expect(expired.events.count == 2)
            #expect(try await ledger.expireOverdueQuestions() == [])

            // Listing: Share one ledger (many tasks)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 1...20 {
                    group.addTask {
                        try await ledger.subject("kid-\(n)").recordPermission(.camera, state: .authorized, cause: .systemPrompt)
                    }
                }
                try await group.waitForAll()
            }
            let stats = ledger.writerStatistics    // transactions <= requests: overlapping calls share commits

            #expect(stats.transactions <= stats.requests)
            #expect(try await ledger.subject("kid-20").permission(.camera)?.state == .authorized)
            #expect(try ledger.read { try $0.subjects().count } == 20)

            // Listing: Share one ledger (one open a process)
            do {
                _ = try await Ledger.open(path: directory + "/family.ledger")
            } catch {
                print(error)   // family.ledger: the ledger is already open in this process; share that Ledger instead …
            }

            do {
                _ = try await Ledger.open(path: directory + "/family.ledger")
                Issue.record("a second open of the same ledger in one process succeeded")
            } catch let error as LedgerError {
                #expect(error.kind == .locked)
                #expect(error.description.contains("family.ledger: the ledger is already open in this process; share that Ledger instead"))
            }

            // Listing: Verify
            let report = try await ledger.verify()
            if !report.isIntact {
                print("damaged at seq \(report.damagedSeq ?? 0): \(report.problem ?? "")")
            }
            let digest = try await ledger.digest()   // SHA-256 of all derived state: equal for the same events

            #expect(report.isIntact)
            #expect(report.problem == nil)
            #expect(report.events == (try ledger.head().seq))
            #expect(report.head == (try ledger.head().hash))
            // Another ledger holding the same events has the same digest.
            let copy = try Ledger(path: directory + "/copy.ledger")
            var lines: [PermissionEvent] = []
            lines += try storedEvents(ledger).map(\.event)
            try await copy.append(lines)
            #expect(try await copy.digest() == digest)
            #expect(try copy.head() == (try ledger.head()))
            let headBeforeClosing = try ledger.head()

            // Listing: Close it
            await ledger.close()
            let reopened = try await Ledger.open(path: directory + "/family.ledger", options: .init(readOnly: true))

            #expect(ledger.isClosed)
            #expect(try reopened.head() == headBeforeClosing)
            await #expect(throws: LedgerError.self) { try await child.recordExpiry(question.id) }
            #expect(ledgerError { _ = try ledger.head() }?.kind == .closed)
        }
    }

    static let article = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/PermissionLedger/Documentation.docc/GettingStarted.md")

    @Test("every Swift listing of the article stands in this file as written, in the article's order")
    func everyListingStandsHereAsWritten() throws {
        let lines = try String(contentsOf: Self.article, encoding: .utf8).components(separatedBy: "\n")
        var listings: [(line: Int, code: [String])] = []
        var current: (line: Int, code: [String])?
        for (number, line) in lines.enumerated() {
            if current == nil, line == "```swift" {
                current = (number + 2, [])
            } else if current != nil, line == "```" {
                listings.append(current!)
                current = nil
            } else if current != nil {
                current!.code.append(line)
            }
        }
        // The package manifest is not code of the app.
        listings.removeAll { $0.code.first?.hasPrefix("// swift-tools-version") == true }
        #expect(listings.count >= 15)
        let here = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8).components(separatedBy: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var from = 0
        for listing in listings {
            let code = listing.code.map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "path: \"family.ledger\"", with: "path: directory + \"/family.ledger\"")
            }.filter { !$0.isEmpty && !$0.hasPrefix("import ") }
            let start = (from..<here.count).first { start in
                var index = start
                for line in code {
                    while index < here.count, here[index].isEmpty { index += 1 }
                    guard index < here.count, here[index] == line else { return false }
                    index += 1
                }
                return true
            }
            #expect(start != nil, "GettingStarted.md:\(listing.line): this listing is not in GettingStartedTests.swift as written, after the one before it")
            from = start.map { $0 + 1 } ?? from
        }
    }
}
