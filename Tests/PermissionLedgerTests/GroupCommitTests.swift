import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// Group commit: concurrent appends share write transactions, and each stays all-or-nothing on its own.
@Suite(.timeLimit(.minutes(10))) struct GroupCommitTests {
    static let base = try! Timestamp(rfc3339: "2026-11-20T09:00:00Z")

    static func asked(_ n: Int, subject: String = "kid-1") -> PermissionEvent {
        let question = try! PermissionQuestion(
            handle: try! CommunicationHandle(value: "friend-\(n)", kind: .custom), id: uuid(n))
        return PermissionEvent(id: "ask-\(n)", subject: subject, occurredAt: base, payload: .questionAsked(question))
    }

    static func answered(_ n: Int, choice: String = "approve", subject: String = "kid-1") -> PermissionEvent {
        PermissionEvent(
            id: "answer-\(n)", subject: subject, occurredAt: base.adding(seconds: 60),
            payload: .questionAnswered(questionID: uuid(n), choiceID: choice, via: .messages))
    }

    static func uuid(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))! }

    /// Holds the ledger's write lock on another thread until `release` is called, so that appends queue up.
    final class WriterHold: @unchecked Sendable {
        private let released = DispatchSemaphore(value: 0)
        private let holding = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)

        init(_ ledger: Ledger) {
            Thread {
                try? ledger.environment.write { _ in
                    self.holding.signal()
                    self.released.wait()
                }
                self.done.signal()
            }.start()
            holding.wait()
        }

        func release() {
            released.signal()
            done.wait()
        }
    }

    /// Waits (politely) until `ledger`'s writer has `waiting` appends queued and is committing `committing`.
    ///
    /// Gives up after 30,000 looks 2 ms apart, not after a minute of wall time: on a loaded machine the
    /// whole suite's tasks share two threads, and a task can wait a minute to be run at all (the appends this
    /// waits for are tasks too). Timing the wait by the clock failed this way about once in four loaded runs.
    static func waitForQueue(_ ledger: Ledger, waiting: Int, committing: Int) async throws {
        for _ in 0..<30_000 {
            if ledger.committer!.queue == (waiting, committing) { return }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("the writer's queue is \(ledger.committer!.queue), not (\(waiting), \(committing))")
    }

    @Test(arguments: [1, 4096]) func concurrentAppendsAllLandWithDistinctSeqsAndAnIntactChain(maxEventsPerCommit: Int) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: true, maxEventsPerCommit: maxEventsPerCommit))
            let outcomes = try await withThrowingTaskGroup(of: AppendOutcome.self) { group in
                for n in 0..<64 { group.addTask { try await ledger.append(Self.asked(n)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let seqs = outcomes.compactMap { if case .appended(let seq) = $0 { seq } else { nil } }
            #expect(seqs.sorted() == Array(1...64))
            #expect(try ledger.head().seq == 64)
            #expect(try await ledger.verify().isIntact)
            let stats = ledger.writerStatistics
            #expect(stats.requests == 64 && stats.events == 64)
            if maxEventsPerCommit == 1 { #expect(stats.transactions == 64) }
        }
    }

    @Test func appendsThatArriveTogetherShareOneTransaction() async throws {
        try await withLedger { ledger in
            try await ledger.append(Self.asked(0))
            // The writer may still be finishing that commit's bookkeeping after the call returned.
            try await Self.waitForQueue(ledger, waiting: 0, committing: 0)
            let before = ledger.writerStatistics.transactions
            let hold = WriterHold(ledger)
            // The writer takes the first arrival and blocks on the held lock; the other 19 queue behind it.
            let first = Task { try await ledger.append(Self.asked(1)) }
            try await Self.waitForQueue(ledger, waiting: 0, committing: 1)
            let appends = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 2...20 { group.addTask { try await ledger.append(Self.asked(n)) } }
                    try await group.waitForAll()
                }
            }
            try await Self.waitForQueue(ledger, waiting: 19, committing: 1)
            hold.release()
            _ = try await first.value
            try await appends.value
            let stats = ledger.writerStatistics
            #expect(stats.transactions - before == 2)
            #expect(stats.largestGroup == 19)
            #expect(try ledger.head().seq == 21)
        }
    }

    @Test func aRejectedRequestFailsAloneInASharedTransaction() async throws {
        try await withLedger { ledger in
            try await ledger.append((0..<4).map { Self.asked($0) })
            try await Self.waitForQueue(ledger, waiting: 0, committing: 0)
            let hold = WriterHold(ledger)
            let first = Task { try await ledger.append(Self.asked(4)) }
            try await Self.waitForQueue(ledger, waiting: 0, committing: 1)
            // Seven requests queued together: good singles, a rejected single, a good batch, and a batch whose
            // second event is rejected after its first was written in the shared transaction.
            let requests: [(name: String, events: [PermissionEvent])] = [
                ("answer 0", [Self.answered(0)]),
                ("answer to an unknown question", [Self.answered(99)]),
                ("ask 10 and answer it", [Self.asked(10), Self.answered(10)]),
                ("ask 11, then a bad choice", [Self.asked(11), Self.answered(11, choice: "maybe")]),
                ("answer 1 with a conflicting id", [PermissionEvent(
                    id: "ask-1", subject: "kid-1", occurredAt: Self.base,
                    payload: .questionAnswered(questionID: Self.uuid(1), choiceID: "approve", via: .messages))]),
                ("answer 2", [Self.answered(2, choice: "decline")]),
                ("answer 0 again", [Self.answered(0)]),
            ]
            // Queued in order, each once the one before is in the queue, so that "answer 0 again" follows "answer 0".
            var tasks: [(String, Task<Result<Ledger.AppendSummary, any Error>, Never>)] = []
            for (index, request) in requests.enumerated() {
                tasks.append((request.name, Task {
                    do {
                        return .success(try await ledger.append(request.events))
                    } catch {
                        return .failure(error)
                    }
                }))
                try await Self.waitForQueue(ledger, waiting: index + 1, committing: 1)
            }
            try await Self.waitForQueue(ledger, waiting: requests.count, committing: 1)
            hold.release()
            _ = try await first.value
            var outcome: [String: Result<Ledger.AppendSummary, any Error>] = [:]
            for (name, task) in tasks { outcome[name] = await task.value }
            func failed(_ name: String) -> Bool { if case .failure(let e) = outcome[name], e is AppendRejected { true } else { false } }
            func succeeded(_ name: String) -> Bool { if case .success = outcome[name] { true } else { false } }
            #expect(succeeded("answer 0") && succeeded("ask 10 and answer it") && succeeded("answer 2") && succeeded("answer 0 again"))
            #expect(failed("answer to an unknown question") && failed("ask 11, then a bad choice") && failed("answer 1 with a conflicting id"))
            if case .success(let again) = outcome["answer 0 again"] { #expect(again.duplicates == 1) }
            // Nothing of the rejected batch survives: question 11 was never asked.
            try ledger.read { view throws in
                #expect(try view.question(Self.uuid(11)) == nil)
                #expect(try view.question(Self.uuid(10))?.state == .approved)
                #expect(try view.question(Self.uuid(2))?.state == .denied)
                #expect(try view.question(Self.uuid(1))?.state == .pending)
            }
            #expect(try ledger.head().seq == 5 + 1 + 2 + 1)
            #expect(try await ledger.verify().isIntact)
            #expect(ledger.writerStatistics.largestGroup == requests.count)
        }
    }

    /// An event in its erased form is rejected once its request's events are all applied, after it was written
    /// (its erasure may come later in the request): alone in a request that shares a transaction, it is applied in
    /// a nested one, so that its rejection leaves nothing to the requests after it.
    @Test func aLoneErasedEventRejectedInASharedTransactionLeavesNothing() async throws {
        let erased = try await withTemporaryDirectory { directory in
            let source = try Ledger(path: directory + "/source", options: .seeded("source", durable: false))
            try await source.importFixture("erasure.jsonl")
            let line = try #require(try source.exportText().split(separator: "\n").first { $0.contains("\"commitment\"") })
            var event = try decodeEvent(String(line))
            // Its place in the source's log is not its place here.
            (event.seq, event.hash) = (nil, nil)
            return event
        }
        try await withLedger(seed: "tests") { ledger in
            try await Self.waitForQueue(ledger, waiting: 0, committing: 0)
            let hold = WriterHold(ledger)
            // Recorded before the erased event, so that no rule rejects it before it is written.
            var zero = Self.asked(0)
            zero.recordedAt = Self.base
            #expect(try #require(erased.recordedAt) > Self.base)
            let first = Task { [zero] in try await ledger.append(zero) }
            try await Self.waitForQueue(ledger, waiting: 0, committing: 1)
            let rejected = Task { try await ledger.append(erased) }
            try await Self.waitForQueue(ledger, waiting: 1, committing: 1)
            let next = Task { try await ledger.append(Self.asked(1)) }
            try await Self.waitForQueue(ledger, waiting: 2, committing: 1)
            hold.release()
            _ = try await first.value
            await #expect(throws: AppendRejected.self) { try await rejected.value }
            #expect(try await next.value == .appended(seq: 2))
            let stored = try ledger.read { view in
                var events: [RecordedEvent] = []
                try view.forEachEvent(after: 0, through: 10) { events.append($0) }
                return events
            }
            #expect(stored.map(\.event.id) == ["ask-0", "ask-1"])
            // Nothing of the rejected event is left in the tables either.
            guard case .questionAsked(let question) = erased.payload else { Issue.record("\(erased.type)"); return }
            #expect(try ledger.read { try $0.question(question.id) } == nil)
            #expect(try await ledger.verify().isIntact)
            #expect(ledger.writerStatistics.largestGroup == 2)
        }
    }

    @Test func aLoneRejectedRequestWritesNothing() async throws {
        try await withLedger { ledger in
            await #expect(throws: AppendRejected.self) { try await ledger.append([Self.asked(1), Self.answered(1, choice: "nope")]) }
            #expect(try ledger.head().seq == 0)
            try await ledger.append(Self.asked(1))
            #expect(try ledger.head().seq == 1)
        }
    }

    @Test func aReadOnlyLedgerRefusesAppends() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            _ = try Ledger(path: path, options: .init(durable: false))
            let reader = try Ledger(path: path, options: .init(readOnly: true))
            await #expect(throws: LedgerError.self) { try await reader.append(Self.asked(1)) }
        }
    }

    @Test(arguments: [false, true]) func stoppingTheWriterDrainsWhatIsQueuedThenRefuses(durable: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: durable))
            let hold = WriterHold(ledger)
            let first = Task { try await ledger.append(Self.asked(0)) }
            try await Self.waitForQueue(ledger, waiting: 0, committing: 1)
            let queued = (1...10).map { n in Task { try await ledger.append(Self.asked(n)) } }
            try await Self.waitForQueue(ledger, waiting: 10, committing: 1)
            // Stop while eleven appends wait: stop() returns only after every one of them is committed. It
            // blocks its thread, so it runs on a thread of its own, not on the tasks' few shared threads.
            let stopped = DispatchSemaphore(value: 0)
            Thread {
                ledger.committer!.stop()
                stopped.signal()
            }.start()
            try await Task.sleep(for: .milliseconds(20))
            hold.release()
            while stopped.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(2)) }
            #expect(try ledger.head().seq == 11)
            _ = try await first.value
            for task in queued { _ = try await task.value }
            // Afterwards appends are refused, not lost in a queue nobody serves.
            let error = await #expect(throws: LedgerError.self) { try await ledger.append(Self.asked(99)) }
            #expect(error?.kind == .closed)
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test(arguments: [false, true]) func closingTheLedgerFinishesQueuedAppends(durable: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path, options: .init(durable: durable))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<32 { group.addTask { try await ledger.append(Self.asked(n)) } }
                    try await group.waitForAll()
                }
            }
            // The first ledger is gone with its writer thread; the directory opens again with everything in it.
            let reopened = try Ledger(path: path, options: .init(durable: false))
            #expect(try reopened.head().seq == 32)
            #expect(try await reopened.verify().isIntact)
        }
    }

    /// Single-event requests of a group share one store and one transaction. A request rejected after its record
    /// was made (its given hash does not match) leaves nothing of it to the next, which takes the same seq: the
    /// next stores its own record, sealed or not.
    @Test func aRequestRejectedAfterItsRecordWasMadeLeavesNothingToTheNext() async throws {
        try await withLedger { ledger in
            var wrongHash = Self.asked(1)
            wrongHash.hash = ChainHash(hex: String(repeating: "07", count: 32))
            let permission = PermissionEvent(
                id: "camera", subject: "kid-1", occurredAt: Self.base, payload: .permissionChanged(.camera, state: .denied, cause: nil))
            try ledger.environment.write { txn in
                let store = LMDBStore(txn: txn, tables: ledger.tables)
                var head = try Ledger.head(txn.reader, ledger.tables)
                for (event, accepted) in [(wrongHash, false), (permission, true), (wrongHash, false), (Self.asked(2), true)] {
                    let request = GroupCommitter.Request(events: [event], maxRejections: 1) { _ in }
                    do {
                        head = try GroupCommitter.apply(request, store: store, head: head, clock: { Self.base }).head
                        #expect(accepted)
                    } catch is AppendRejected {
                        #expect(!accepted)
                    }
                }
                // As a commit of the ledger's own: the keys it made are durable first, and belong to it.
                try ledger.tables.keyRing?.syncNewKeys()
            }
            let stored = try ledger.read { view in
                var events: [RecordedEvent] = []
                try view.forEachEvent(after: 0, through: 10) { events.append($0) }
                return events
            }
            #expect(stored.map(\.event.id) == ["camera", "ask-2"])
            #expect(stored.last?.event.payload == Self.asked(2).payload)
            let report = try await ledger.verify()
            #expect(report.isIntact, "\(report)")
        }
    }
}

/// What readers may see, and what happens after a failed flush.
@Suite(.timeLimit(.minutes(10))) struct DurabilityStateTests {
    typealias G = GroupCommitTests

    /// Stores an event directly, as the writer does before its flush, without telling the watch.
    static func commitWithoutFlush(_ ledger: Ledger, _ event: PermissionEvent) throws {
        let request = GroupCommitter.Request(events: [event], maxRejections: 1) { _ in }
        try ledger.environment.write { txn in
            _ = try GroupCommitter.apply(
                request, store: LMDBStore(txn: txn, tables: ledger.tables), head: try Ledger.head(txn.reader, ledger.tables),
                clock: { G.base })
            try ledger.tables.keyRing?.syncNewKeys()
        }
    }

    @Test func subscribersOfThisProcessSeeOnlyWhatIsDurable() async throws {
        try await withLedger { ledger in
            try await ledger.append((0..<10).map { G.asked($0) })
            // Event 11 is committed, and its flush has not returned yet.
            try Self.commitWithoutFlush(ledger, G.asked(10))
            ledger.watch.committed(through: 11)
            #expect(ledger.watch.visibleLimit == 10)
            #expect(try ledger.page(after: 0, subject: nil, limit: 100).events.count == 10)
            #expect(try ledger.page(after: 0, subject: "kid-1", limit: 100).events.count == 10)
            var iterator = ledger.events(after: 10, pollInterval: .seconds(60)).makeAsyncIterator()
            let next = Task { try await iterator.next()?.seq }
            try await Task.sleep(for: .milliseconds(50))
            // The flush returns: the event appears, and the waiting subscriber wakes.
            ledger.watch.advanced(to: 11)
            #expect(ledger.watch.visibleLimit == nil)
            #expect(try await next.value == 11)
        }
    }

    @Test func afterAFailedFlushEveryAppendFails() async throws {
        try await withLedger { ledger in
            try await ledger.append(G.asked(1))
            let failure = LedgerError(.storage, "flushing the commit to disk failed (I/O error)")
            ledger.watch.failed(failure)
            await #expect(throws: failure) { try await ledger.append(G.asked(2)) }
            #expect(throws: failure) { try ledger.appendSynchronously([G.asked(3)]) }
            #expect(try ledger.head().seq == 1)
        }
    }
}
