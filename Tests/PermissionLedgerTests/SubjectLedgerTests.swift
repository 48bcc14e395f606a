import Foundation
import LMDB
import PermissionLedger
import PermissionModel
import Testing

/// The PermissionKit-shaped API, expiry sweeps, and opening rules.
@Suite(.timeLimit(.minutes(10))) struct SubjectLedgerTests {
    /// A settable clock shared with the ledger.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var current: Timestamp
        init(_ start: String) { current = try! Timestamp(rfc3339: start) }
        var now: Timestamp { lock.withLock { current } }
        func set(_ text: String) { lock.withLock { current = try! Timestamp(rfc3339: text) } }
    }

    static func withClockedLedger<T>(_ clock: Clock, _ body: (Ledger) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(mapSize: 1 << 20, durable: false, clock: { clock.now }))
            return try await body(ledger)
        }
    }

    static let friend = try! CommunicationHandle(value: "+1 (415) 555-0100", kind: .phoneNumber)
    static let stranger = try! CommunicationHandle(value: "stranger@example.com", kind: .emailAddress)

    @Test func theAskFlowInPermissionKitTerms() async throws {
        let clock = Clock("2026-11-20T09:00:00Z")
        try await Self.withClockedLedger(clock) { ledger in
            let child = ledger.subject("kid-1")
            let question = try PermissionQuestion(handle: Self.friend)
            #expect(try await child.recordAsk(question) == .appended(seq: 1))
            // Retrying the same ask (same time) is a no-op, not a second question.
            #expect(try await child.recordAsk(question, at: try time("2026-11-20T09:00:00Z")) == .duplicate(of: 1))
            #expect(try await child.isKnownHandle(Self.friend) == false)
            #expect(try await ledger.question(question.id)?.state == .pending)

            clock.set("2026-11-20T09:05:00Z")
            try await child.recordResponse(to: question.id, choice: .approve, via: .inPerson)
            #expect(try await child.isKnownHandle(Self.friend))
            #expect(try await child.knownHandles(in: [Self.friend, Self.stranger]) == [Self.friend])
            #expect(try await child.knownHandles().map(\.source) == [.question(question.id)])
            // As of the ask, the friend was not known yet.
            #expect(try await child.isKnownHandle(Self.friend, asOf: .seq(1)) == false)
            #expect(try await ledger.question(question.id, asOf: .seq(1))?.state == .pending)
            #expect(try await ledger.question(question.id)?.via == .inPerson)
            // Another child knows nothing of it.
            #expect(try await ledger.subject("kid-2").isKnownHandle(Self.friend) == false)

            let canceled = try PermissionQuestion(handles: [Self.stranger])
            try await child.recordAsk(canceled)
            try await child.recordSendCanceled(canceled.id)
            let failed = try PermissionQuestion(handle: Self.stranger)
            try await child.recordAsk(failed)
            try await child.recordAskFailed(failed.id, error: AskError(code: .communicationLimitsNotEnabled))
            let update = try PermissionQuestion(significantAppUpdateTopic: try SignificantAppUpdateTopic(description: "Chat with friends"))
            try await child.recordAsk(update)
            try await child.recordExpiry(update.id)
            // Ordered by askedAt, then id: the last three share a time, so compare the states as a sorted list.
            #expect(try await child.questions().map(\.state.rawValue).sorted() == ["approved", "canceled", "expired", "failed"])
            #expect(try await child.questions(state: .failed).map(\.question.id) == [failed.id])
            // A response to a canceled question breaks a rule: the caller hears why.
            await #expect(throws: AppendRejected.self) {
                try await child.recordResponse(to: canceled.id, choice: .approve)
            }

            try await child.recordKnownHandles([], among: [Self.friend])
            #expect(try await child.isKnownHandle(Self.friend) == false)
            try await child.recordPermission(.camera, state: .authorized, cause: .systemPrompt)
            #expect(try await child.permission(.camera)?.state == .authorized)
            #expect(try await child.permission(.contacts) == nil)
            #expect(try await child.permissions().count == 1)
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test func eventsMadeThroughTheAPIExportAndImportUnchanged() async throws {
        let clock = Clock("2026-11-20T09:00:00Z")
        try await Self.withClockedLedger(clock) { ledger in
            let child = ledger.subject("kid-1")
            let question = try PermissionQuestion(
                communicationTopic: try CommunicationTopic(personInformation: [
                    PersonInformation(handle: Self.friend, nameComponents: PersonNameComponents(givenName: "Ana")),
                ], actions: [.message, .call]),
                expiresAt: try time("2026-11-21T09:00:00Z"))
            try await child.recordAsk(question)
            try await child.recordKnownHandles([Self.friend], among: [Self.friend, Self.stranger])
            try await withLedger { copy in
                _ = try await copy.append(try ledger.exportText().split(separator: "\n").map { try decodeEvent(String($0)) })
                #expect(try copy.exportText() == ledger.exportText())
            }
        }
    }

    // MARK: Expiry sweeps

    static func askExpiring(_ ledger: Ledger, _ n: Int, expiresAt: String?, subject: String = "kid-1") async throws -> UUID {
        let question = try PermissionQuestion(handle: try CommunicationHandle(value: "friend-\(n)", kind: .custom), id: GroupCommitTests.uuid(n), expiresAt: expiresAt.map(time))
        try await ledger.subject(subject).recordAsk(question, at: try time("2026-11-20T08:00:00Z"))
        return question.id
    }

    @Test func aSweepExpiresEveryOverduePendingQuestionOnce() async throws {
        let clock = Clock("2026-11-20T09:00:00Z")
        try await Self.withClockedLedger(clock) { ledger in
            let early = try await Self.askExpiring(ledger, 1, expiresAt: "2026-11-20T10:00:00Z")
            let late = try await Self.askExpiring(ledger, 2, expiresAt: "2026-11-20T12:00:00Z", subject: "kid-2")
            let answered = try await Self.askExpiring(ledger, 3, expiresAt: "2026-11-20T10:00:00Z")
            let never = try await Self.askExpiring(ledger, 4, expiresAt: nil)
            let atTheMoment = try await Self.askExpiring(ledger, 5, expiresAt: "2026-11-20T11:00:00Z")
            try await ledger.subject("kid-1").recordResponse(to: answered, choice: .approve, at: try time("2026-11-20T09:30:00Z"))

            #expect(try await ledger.expireOverdueQuestions() == [])
            clock.set("2026-11-20T11:00:00Z")
            #expect(try await Set(ledger.expireOverdueQuestions()) == [early, atTheMoment])
            #expect(try await ledger.expireOverdueQuestions() == [])
            let expired = try #require(try await ledger.question(early))
            #expect(expired.state == .expired)
            #expect(expired.events.last?.type == .questionExpired)
            #expect(expired.events.last?.id == "expired:\(early.uuidString)")
            #expect(expired.events.last?.occurredAt == (try time("2026-11-20T10:00:00Z")))
            #expect(try await ledger.question(late)?.state == .pending)
            #expect(try await ledger.question(answered)?.state == .approved)
            #expect(try await ledger.question(never)?.state == .pending)
            #expect(try await ledger.expireOverdueQuestions(now: try time("2026-11-20T12:00:00Z")) == [late])
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test func concurrentSweepsExpireEachQuestionExactlyOnce() async throws {
        let clock = Clock("2026-11-20T09:00:00Z")
        try await Self.withClockedLedger(clock) { ledger in
            for n in 0..<40 { _ = try await Self.askExpiring(ledger, n, expiresAt: "2026-11-20T10:00:00Z", subject: "kid-\(n % 4)") }
            clock.set("2026-11-20T10:00:00Z")
            let results = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for _ in 0..<6 { group.addTask { try await ledger.expireOverdueQuestions() } }
                return try await group.reduce(into: []) { $0.append(contentsOf: $1) }
            }
            #expect(results.count == 40)
            #expect(Set(results).count == 40)
            #expect(try ledger.head().seq == 80)
            #expect(try ledger.read { try $0.questions(state: .expired).count } == 40)
        }
    }

    @Test func sweepsInSeparateLedgersWriteTheSameEvents() async throws {
        // What two processes sweeping the same questions write is identical, so either's events
        // offered to the other are duplicates: a sweep is safe to run anywhere, any number of times.
        let clock = Clock("2026-11-20T09:00:00Z")
        try await Self.withClockedLedger(clock) { a in
            try await Self.withClockedLedger(clock) { b in
                for ledger in [a, b] {
                    for n in 0..<5 { _ = try await Self.askExpiring(ledger, n, expiresAt: "2026-11-20T10:0\(n):00Z") }
                }
                clock.set("2026-11-20T11:00:00Z")
                try await a.expireOverdueQuestions()
                clock.set("2026-11-20T11:30:00Z")
                try await b.expireOverdueQuestions()
                var fromA: [PermissionEvent] = []
                fromA += try storedEvents(a, after: 5).map(\.event)
                let summary = try await b.append(fromA.map { event in
                    var event = event
                    event.seq = nil
                    event.hash = nil
                    return event
                })
                #expect(summary.duplicates == 5)
                #expect(try b.head().seq == 10)
            }
        }
    }

    // MARK: Opening

    @Test func aLedgerOpenedTwiceInOneProcessIsAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            var first: Ledger? = try Ledger(path: path, options: .init(durable: false))
            #expect(first != nil)
            for readOnly in [false, true] {
                let error = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: readOnly)) }
                #expect(error?.kind == .locked)
                #expect(error?.message.contains("already open in this process") == true)
            }
            // Through another spelling of the same directory, too.
            let error = ledgerError { _ = try Ledger(path: directory + "/./ledger/", options: .init(readOnly: true)) }
            #expect(error?.kind == .locked)
            first = nil
            let second = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try second.head().seq == 0)
        }
    }

    @Test func twoOpensOfANewLedgerAtOnceAreOneLedgerAndOneClearError() async throws {
        try await withTemporaryDirectory { directory in
            for round in 0..<100 {
                let path = directory + "/ledger-\(round)"
                let opens = await withTaskGroup(of: Result<Ledger, LedgerError>.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            do {
                                return .success(try Ledger(path: path, options: .init(durable: false)))
                            } catch let error as LedgerError {
                                return .failure(error)
                            } catch {
                                return .failure(LedgerError(.storage, "\(error)"))
                            }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                let opened = opens.compactMap { try? $0.get() }
                let refused = opens.compactMap { if case .failure(let error) = $0 { error } else { nil } }
                #expect(opened.count == 1 && refused.map(\.kind) == [.locked], "round \(round): \(refused.map(\.message))")
            }
        }
    }

    /// `verify` and `migrate` look at a directory and open it while no other open in this process runs, as a ledger's
    /// open does: while one runs (held here), they wait, so that neither sees a ledger half made by the other. Even
    /// the look that finds no directory at all waits.
    /// The open lock is held on a thread of its own, and every wait is made there too, never on a thread of the
    /// concurrency pool, which the tests running beside this one need; the two commands take their turns.
    @Test func aReadingOpenWaitsForAnOpenUnderWay() async throws {
        for command in ["verify", "migrate"] {
            try await withTemporaryDirectory { directory in
                let path = directory + "/not-made-yet"
                let (waited, finished) = await withCheckedContinuation { (done: CheckedContinuation<(Bool, Bool), Never>) in
                    Thread {
                        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                        let finished = DispatchSemaphore(value: 0)
                        Thread {
                            Environment.whileOpening {
                                entered.signal()
                                release.wait()
                            }
                        }.start()
                        entered.wait()
                        Thread {
                            if command == "verify" { _ = try? Ledger.verify(path: path) } else { _ = try? Ledger.migrate(from: path, to: path + "-new") }
                            finished.signal()
                        }.start()
                        let waited = finished.wait(timeout: .now() + 0.5) == .timedOut
                        release.signal()
                        done.resume(returning: (waited, finished.wait(timeout: .now() + 60) == .success))
                    }.start()
                }
                #expect(waited, "\(command) opened while an open was under way")
                #expect(finished)
            }
        }
    }

    /// An empty directory of sysfs, where LMDB cannot keep files, if this machine has one.
    static let emptySysfsDirectory = ["/sys/kernel/debug", "/sys/kernel/security", "/sys/kernel/tracing", "/sys/kernel/software_nodes"]
        .first { (try? FileManager.default.contentsOfDirectory(atPath: $0))?.isEmpty == true }

    @Test(.enabled(if: emptySysfsDirectory != nil)) func aPseudoFileSystemIsRefusedWithAReason() throws {
        let path = try #require(Self.emptySysfsDirectory)
        let error = ledgerError { _ = try Ledger(path: path) }
        #expect(error?.kind == .storage)
        #expect(error?.message == "\(path): a ledger cannot live here: it is in /sys, which holds no files; LMDB needs a local file system (memory maps and locks)")
    }
}
