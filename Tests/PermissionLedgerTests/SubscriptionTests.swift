import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// Live subscriptions: catch up from a seq, continue live, no gap and no duplicate at the switch.
@Suite(.timeLimit(.minutes(10))) struct SubscriptionTests {
    typealias G = GroupCommitTests

    static func observed(_ n: Int, subject: String) -> PermissionEvent {
        // A child's contacts are few: 40 handles, observed again and again.
        let handle = try! CommunicationHandle(value: "seen-\(n % 40)", kind: .custom)
        return PermissionEvent(
            id: "obs-\(subject)-\(n)", subject: subject, occurredAt: G.base,
            payload: .handlesObserved(checked: [handle], known: n % 2 == 0 ? [handle] : []))
    }

    /// Collects events from `sequence` until one with `seq == last`, failing after a minute.
    static func collect(_ sequence: LedgerEvents, through last: UInt64) async throws -> [PermissionEvent] {
        try await withThrowingTaskGroup(of: [PermissionEvent]?.self) { group in
            group.addTask {
                var seen: [PermissionEvent] = []
                for try await event in sequence {
                    seen.append(event.event)
                    if event.seq >= last { break }
                }
                return seen
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let first else {
                Issue.record("the subscription did not reach seq \(last) within a minute")
                return []
            }
            return first
        }
    }

    @Test func aSubscriberStartedDuringWritesSeesEveryEventOnceInOrder() async throws {
        try await withLedger { ledger in
            let total = 3_000
            let writer = Task {
                // Many small concurrent batches: commits land while the subscriber catches up and after.
                for start in stride(from: 0, to: total, by: 100) {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for chunk in stride(from: start, to: start + 100, by: 10) {
                            group.addTask {
                                try await ledger.append((chunk..<chunk + 10).map { Self.observed($0, subject: "kid-\($0 % 3)") })
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }
            // Start once writing is under way.
            while try ledger.head().seq < 500 { try await Task.sleep(for: .milliseconds(1)) }
            let all = Task { try await Self.collect(ledger.events(after: 0), through: UInt64(total)) }
            let fromMiddle = Task { try await Self.collect(ledger.events(after: 250), through: UInt64(total)) }
            try await writer.value
            let seen = try await all.value
            #expect(seen.map(\.seq!) == Array(1...UInt64(total)))
            #expect(Set(seen.map(\.id)).count == total)
            #expect(try await fromMiddle.value.map(\.seq!) == Array(251...UInt64(total)))
            // Every event read live is the stored one.
            var stored: [PermissionEvent] = []
            stored += try storedEvents(ledger).map(\.event)
            #expect(seen == stored)
        }
    }

    @Test func aSubjectSubscriptionSeesOnlyThatSubjectsEvents() async throws {
        try await withLedger { ledger in
            try await ledger.append((0..<30).map { Self.observed($0, subject: "kid-\($0 % 3)") })
            let events = ledger.events(after: 0, subject: "kid-1")
            let collector = Task {
                var seqs: [UInt64] = []
                for try await event in events {
                    #expect(event.subject == "kid-1")
                    seqs.append(event.seq)
                    if seqs.count == 20 { break }
                }
                return seqs
            }
            // Other subjects' events move the head without giving this subscriber anything.
            try await ledger.append((30..<60).map { Self.observed($0, subject: $0 % 3 == 1 ? "kid-1" : "kid-other") })
            let seqs = try await collector.value
            let expected: [UInt64] = (0..<60).filter { $0 % 3 == 1 }.map { UInt64($0 + 1) }
            #expect(seqs == expected)
        }
    }

    @Test func aSlowSubscriberNeitherBlocksWritersNorMissesAnything() async throws {
        try await withLedger(mapSize: 8 << 20) { ledger in
            var iterator = ledger.events().makeAsyncIterator()
            try await ledger.append(Self.observed(0, subject: "kid"))
            #expect(try await iterator.next()?.seq == 1)
            // The subscriber stops reading while 5,000 more events are written; the writes complete.
            for start in stride(from: 1, to: 5_001, by: 500) {
                try await ledger.append((start..<start + 500).map { Self.observed($0, subject: "kid") })
            }
            #expect(try ledger.head().seq == 5_001)
            var next: UInt64 = 2
            while next <= 5_001, let event = try await iterator.next() {
                #expect(event.seq == next)
                next += 1
            }
            #expect(next == 5_002)
        }
    }

    @Test func cancellingTheTaskEndsTheSubscription() async throws {
        try await withLedger { ledger in
            let task = Task {
                var count = 0
                for try await _ in ledger.events() { count += 1 }
                return count
            }
            try await ledger.append(Self.observed(0, subject: "kid"))
            try await Task.sleep(for: .milliseconds(50))
            task.cancel()
            #expect(try await task.value <= 1)
        }
    }

    @Test func questionUpdatesFollowAQuestionToItsFinalState() async throws {
        try await withLedger { ledger in
            let updates = Task {
                var states: [QuestionState] = []
                for try await status in ledger.questionUpdates(G.uuid(7)) { states.append(status.state) }
                return states
            }
            // Asked after the subscription began, with unrelated events around it.
            try await ledger.append(G.asked(1))
            try await ledger.append(G.asked(7))
            try await ledger.append(G.answered(1))
            try await ledger.append(G.answered(7, choice: "decline"))
            try await ledger.append(Self.observed(1, subject: "kid-1"))
            #expect(try await updates.value == [.pending, .denied])
            // Once asked, updates start from the question.asked, whenever iteration starts.
            var replay: [QuestionState] = []
            for try await status in ledger.questionUpdates(G.uuid(1)) { replay.append(status.state) }
            #expect(replay == [.pending, .approved])
        }
    }

    static func erasure(subject: String) -> PermissionEvent {
        PermissionEvent(id: "erase-\(subject)", subject: subject, occurredAt: G.base.adding(seconds: 3600),
                        payload: .subjectErased(Erasure(basis: .guardianRequest, reference: nil, before: nil)))
    }

    /// An erasure of the subject's is an update of its known handles (their values become erased), and of a
    /// question of its (its values shown erased, its state unchanged); other subjects' updates are not told of it.
    @Test func updatesReportAnErasure() async throws {
        try await withLedger { ledger in try await Self.withinAMinute {
            try await ledger.append([G.asked(1), G.answered(1), G.asked(2)])
            var handles = ledger.subject("kid-1").knownHandleUpdates(pollInterval: .milliseconds(10)).makeAsyncIterator()
            var question = ledger.questionUpdates(G.uuid(2), pollInterval: .milliseconds(10)).makeAsyncIterator()
            #expect(try await handles.next()?.handles.map(\.value) == [.readable("friend-1")])
            let pending = try #require(try await question.next())
            let friend = try CommunicationHandle(value: "friend-2", kind: .custom)
            #expect(pending.state == .pending && pending.handles == [.readable(friend)])

            try await ledger.append(Self.erasure(subject: "kid-1"))
            let mark = ErasureMark(seq: 4, basis: .guardianRequest)
            let erasedHandles = try #require(try await handles.next())
            #expect(erasedHandles.seq == 4 && erasedHandles.handles.map(\.value) == [.erased(mark)], "\(erasedHandles)")
            let erasedQuestion = try #require(try await question.next())
            #expect(erasedQuestion.state == .pending && erasedQuestion.handles == [.erased(mark)], "\(erasedQuestion)")

            // Then the question's own next event: the erasure is not told twice.
            try await ledger.append([G.asked(3), G.answered(2, choice: "decline")])
            let denied = try #require(try await question.next())
            #expect(denied.state == .denied && denied.events.last?.seq == 6, "\(denied)")
        } }
    }

    /// Runs `body` in a task that is cancelled after a minute: the updates' iterators then end (`nil`), so that an
    /// update that never comes fails the test instead of holding it.
    static func withinAMinute(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let run = Task { try await body() }
        let watch = Task {
            try await Task.sleep(for: .seconds(60))
            run.cancel()
        }
        defer { watch.cancel() }
        try await run.value
    }

    @Test func knownHandleUpdatesReportEachChangeOfTheSet() async throws {
        try await withLedger { ledger in
            let child = ledger.subject("kid-1")
            var updates = child.knownHandleUpdates().makeAsyncIterator()
            #expect(try await updates.next()?.handles == [])
            try await ledger.append(G.asked(1))
            try await ledger.append(G.answered(1))
            let first = try await updates.next()
            #expect(first?.handles.map(\.handle.value) == ["friend-1"])
            #expect(first?.seq == 2)
            try await ledger.append(G.asked(2))
            try await ledger.append(G.answered(2, choice: "decline"))  // changes nothing: no update
            try await ledger.append(PermissionEvent(
                id: "obs", subject: "kid-1", occurredAt: G.base,
                payload: .handlesObserved(checked: [try CommunicationHandle(value: "friend-1", kind: .custom)], known: [])))
            let second = try await updates.next()
            #expect(second?.handles == [])
            #expect(second?.seq == 5)
        }
    }

    /// Updates read after an erasure tell its erased handles apart: one handle of a kind making way for another
    /// is an update, though both values are gone.
    @Test func knownHandleUpdatesTellErasedHandlesOfOneKindApart() async throws {
        try await withLedger { ledger in
            try await ledger.append(json: JSONLine.observed("o1", checked: [("tinker", "custom")], known: [("tinker", "custom")], at: "09:00:00", recorded: "09:00:00"))
            var updates = ledger.knownHandleUpdates(subject: "kid-ava", pollInterval: .milliseconds(10)).makeAsyncIterator()
            #expect(try await updates.next()?.handles.map(\.handle.value) == ["tinker"])
            try await ledger.append(json:
                JSONLine.observed("o2", checked: [("tinker", "custom")], known: [("tinker", "custom")], at: "09:10:00", recorded: "09:10:00"),
                JSONLine.observed("o3", checked: [("tinker", "custom"), ("pixel", "custom")], known: [("pixel", "custom")], at: "09:20:00", recorded: "09:20:00"))
            try await ledger.append([try KeyErasureTests.erasure("erase", subject: "kid-ava", at: "2026-11-20T10:00:00Z")])
            try await ledger.append(json: JSONLine.observed("o5", checked: [("zed", "custom")], known: [("zed", "custom")], at: "10:10:00", recorded: "10:10:00"))
            // Seq 2 observes tinker again, now read as erased: an update. Seq 3 puts pixel in tinker's place,
            // both erased: an update. Then zed, readable, after the erasure.
            let two = try #require(try await updates.next())
            #expect(two.seq == 2 && two.handles.count == 1 && two.handles[0].erased != nil, "\(two)")
            let three = try #require(try await updates.next())
            #expect(three.seq == 3 && three.handles.count == 1 && three.handles[0].erased != nil, "\(three)")
            let five = try #require(try await updates.next())
            #expect(five.seq == 5 && five.handles.map(\.handle.value).contains("zed"), "\(five)")
        }
    }

    @Test func responsesArriveWithTheirQuestionAndChoice() async throws {
        try await withLedger { ledger in
            try await ledger.append([G.asked(1), G.asked(2, subject: "kid-2")])
            var responses = ledger.subject("kid-2").responses().makeAsyncIterator()
            try await ledger.append([G.answered(1), G.answered(2, choice: "decline", subject: "kid-2")])
            let response = try await responses.next()
            #expect(response?.question.id == G.uuid(2))
            #expect(response?.choice == .decline)
            #expect(response?.via == .messages)
            #expect(response?.subject == "kid-2")
            #expect(response?.seq == 4)
            #expect(response?.late == false)
            #expect(response?.erased == nil)
            #expect(response?.choiceTitle == .readable("Decline"), "\(String(describing: response))")
        }
    }

    /// An erased question's response says so: its values are not given as empty strings.
    @Test func anErasedQuestionsResponseNamesItsErasure() async throws {
        try await withLedger { ledger in
            try await ledger.append([G.asked(1), G.answered(1)])
            try await ledger.append([try KeyErasureTests.erasure("erase", subject: "kid-1", at: "2036-11-21T10:00:00Z")])
            var responses = ledger.responses(after: 0, pollInterval: .milliseconds(10)).makeAsyncIterator()
            let response = try #require(try await responses.next())
            let mark = ErasureMark(seq: 3, basis: .guardianRequest)
            #expect(response.erased == mark)
            #expect(response.choiceTitle == .erased(mark))
            #expect(!response.handles.isEmpty && response.handles.allSatisfy { $0 == .erased(mark) }, "\(response.handles)")
        }
    }
}
