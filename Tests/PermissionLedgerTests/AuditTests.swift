import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// The audit queries of Audits.swift (`history`, `firstSeq`, `handleRecords`, `statistics`, `diff`, `at`) on
/// small inline scenarios with exact expected values.
@Suite struct AuditTests {
    /// Question ids of the audit scenarios.
    enum AQ {
        static let q1 = "A0D17000-0000-4000-8000-000000000001"
        static let q2 = "A0D17000-0000-4000-8000-000000000002"
        static let q3 = "A0D17000-0000-4000-8000-000000000003"
        static let q4 = "A0D17000-0000-4000-8000-000000000004"
        static let q5 = "A0D17000-0000-4000-8000-000000000005"
        static let q6 = "A0D17000-0000-4000-8000-000000000006"
    }

    static func t(_ hms: String) throws -> Timestamp { try time(JSONLine.at(hms)) }
    static func custom(_ value: String) throws -> CommunicationHandle { try CommunicationHandle(value: value, kind: .custom) }

    // MARK: The general scenario: two children, every event type

    /// Sixteen events, ids `s-01` to `s-16` in seq order. Events 5 and 6 share a recordedAt (09:05:01).
    ///
    /// | seq | subject | event |
    /// |---|---|---|
    /// | 1 | kid-ava | q1 asked about custom dragonslayer42, expiresAt 09:30 (expires by the clock) |
    /// | 2 | kid-ben | camera notDetermined |
    /// | 3 | kid-ben | q2 asked about custom pixelpal (time-limited choices) |
    /// | 4 | kid-ben | q2 answered approve-1h at 09:03: pixelpal known until 10:03 |
    /// | 5 | kid-ava | q3 asked about email aunt.jo@example.net |
    /// | 6 | kid-ava | microphone askAgain |
    /// | 7 | kid-ava | q3 answered decline |
    /// | 8 | kid-ben | camera authorized |
    /// | 9 | kid-ben | q4 asked (significant update) |
    /// | 10 | kid-ben | q4 send canceled |
    /// | 11 | kid-ava | observed comet_rider known |
    /// | 12 | kid-ava | microphone authorized (clock 10:10:01: pixelpal has lapsed) |
    /// | 13 | kid-ben | q5 asked about robo_rex |
    /// | 14 | kid-ben | q5 ask failed (systemError) |
    /// | 15 | kid-ava | q6 asked about quietfox |
    /// | 16 | kid-ava | q6 expired (event) |
    static let scenario: [String] = [
        JSONLine.asked("s-01", question: AQ.q1, subject: "kid-ava", at: "09:00:00", recorded: "09:00:01", expiresAt: "09:30:00"),
        JSONLine.permission("s-02", subject: "kid-ben", "camera", "notDetermined", at: "09:01:00", recorded: "09:01:01"),
        JSONLine.asked("s-03", question: AQ.q2, subject: "kid-ben", at: "09:02:00", recorded: "09:02:01",
                       people: [("pixelpal", "custom")], choices: JSONLine.timeLimitedChoices),
        JSONLine.answered("s-04", question: AQ.q2, choice: "approve-1h", subject: "kid-ben", at: "09:03:00", recorded: "09:03:01"),
        JSONLine.asked("s-05", question: AQ.q3, subject: "kid-ava", at: "09:04:00", recorded: "09:05:01",
                       people: [("aunt.jo@example.net", "emailAddress")]),
        JSONLine.permission("s-06", subject: "kid-ava", "microphone", "askAgain", cause: "prePrompt", at: "09:05:00", recorded: "09:05:01"),
        JSONLine.answered("s-07", question: AQ.q3, choice: "decline", subject: "kid-ava", at: "09:06:00", recorded: "09:06:01"),
        JSONLine.permission("s-08", subject: "kid-ben", "camera", "authorized", cause: "systemPrompt", at: "09:10:00", recorded: "09:10:01"),
        JSONLine.asked("s-09", question: AQ.q4, subject: "kid-ben", at: "09:20:00", recorded: "09:20:01", people: []),
        JSONLine.canceled("s-10", question: AQ.q4, subject: "kid-ben", at: "09:21:00", recorded: "09:21:01"),
        JSONLine.observed("s-11", subject: "kid-ava", checked: [("comet_rider", "custom")], known: [("comet_rider", "custom")],
                          at: "09:40:00", recorded: "09:40:01"),
        JSONLine.permission("s-12", subject: "kid-ava", "microphone", "authorized", cause: "settings", at: "10:10:00", recorded: "10:10:01"),
        JSONLine.asked("s-13", question: AQ.q5, subject: "kid-ben", at: "10:20:00", recorded: "10:20:01", people: [("robo_rex", "custom")]),
        JSONLine.failed("s-14", question: AQ.q5, code: "systemError", subject: "kid-ben", at: "10:21:00", recorded: "10:21:01"),
        JSONLine.asked("s-15", question: AQ.q6, subject: "kid-ava", at: "10:30:00", recorded: "10:30:01", people: [("quietfox", "custom")]),
        JSONLine.expired("s-16", question: AQ.q6, subject: "kid-ava", at: "10:40:00", recorded: "10:40:01"),
    ]

    static func withScenario(_ lines: [String], _ body: (Ledger) async throws -> Void) async throws {
        try await withLedger { ledger async throws in
            let summary = try await ledger.append(try lines.map { try decodeEvent($0) })
            try #require(summary.appended == lines.count)
            try await body(ledger)
        }
    }

    /// The seqs `history` passes, checking each event's id against the scenario (`s-NN` is seq NN).
    static func history(
        _ view: LedgerView, subject: String? = nil, question: String? = nil, type: EventType? = nil,
        from: UInt64 = 1, to: UInt64? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [UInt64] {
        var seqs: [UInt64] = []
        try view.history(subject: subject, question: question.map(QID.uuid), type: type, fromSeq: from, toSeq: to ?? view.point.seq) { event in
            let seq = event.seq ?? 0
            #expect(event.id == String(format: "s-%02d", seq), "history passes each event with its seq", sourceLocation: sourceLocation)
            seqs.append(seq)
        }
        return seqs
    }

    // MARK: history

    @Test func historyFiltersBySubjectQuestionTypeAndBounds() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            try ledger.read(asOf: .seq(16)) { view throws in
                #expect(try Self.history(view) == Array(1...16))
                // By subject (the subject index); subjects are whole: "kid-a" is not a prefix of "kid-ava".
                #expect(try Self.history(view, subject: "kid-ava") == [1, 5, 6, 7, 11, 12, 15, 16])
                #expect(try Self.history(view, subject: "kid-ben") == [2, 3, 4, 8, 9, 10, 13, 14])
                #expect(try Self.history(view, subject: "kid-a") == [])
                #expect(try Self.history(view, subject: "kid-zed") == [])
                // By question: only its events, in seq order.
                #expect(try Self.history(view, question: AQ.q1) == [1])
                #expect(try Self.history(view, question: AQ.q2) == [3, 4])
                #expect(try Self.history(view, question: AQ.q4) == [9, 10])
                #expect(try Self.history(view, question: AQ.q6) == [15, 16])
                #expect(try Self.history(view, question: "A0D17000-0000-4000-8000-0000000000FF") == [])
                // By type.
                #expect(try Self.history(view, type: .permissionChanged) == [2, 6, 8, 12])
                #expect(try Self.history(view, type: .questionAsked) == [1, 3, 5, 9, 13, 15])
                #expect(try Self.history(view, type: .handlesObserved) == [11])
                #expect(try Self.history(view, type: .questionExpired) == [16])
                #expect(try Self.history(view, type: .questionAskFailed) == [14])
                // By bounds: both included.
                #expect(try Self.history(view, from: 4, to: 8) == [4, 5, 6, 7, 8])
                #expect(try Self.history(view, from: 8, to: 8) == [8])
                #expect(try Self.history(view, from: 9, to: 8) == [])
                #expect(try Self.history(view, from: 0, to: 2) == [1, 2], "fromSeq 0 is the start of the log")
                #expect(try Self.history(view, from: 16, to: 16) == [16])
                #expect(try Self.history(view, to: 0) == [])
                // Combinations.
                #expect(try Self.history(view, subject: "kid-ben", from: 3, to: 9) == [3, 4, 8, 9])
                #expect(try Self.history(view, subject: "kid-ava", type: .permissionChanged) == [6, 12])
                #expect(try Self.history(view, subject: "kid-ava", type: .permissionChanged, to: 11) == [6])
                #expect(try Self.history(view, type: .questionAnswered, from: 5) == [7])
                #expect(try Self.history(view, question: AQ.q2, from: 4) == [4])
                #expect(try Self.history(view, question: AQ.q2, to: 3) == [3])
                #expect(try Self.history(view, question: AQ.q2, from: 5, to: 16) == [])
                #expect(try Self.history(view, question: AQ.q1, type: .questionAnswered) == [])
                #expect(try Self.history(view, question: AQ.q6, type: .questionExpired) == [16])
                #expect(try Self.history(view, subject: "kid-ben", question: AQ.q2) == [3, 4])
                #expect(try Self.history(view, subject: "kid-ava", question: AQ.q2) == [], "the question is kid-ben's")
                #expect(try Self.history(view, subject: "kid-ben", question: AQ.q2, type: .questionAnswered, from: 1, to: 4) == [4])
            }
        }
    }

    @Test func historyPassesEventsAsExportWritesThem() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            let exported = try storedEvents(ledger).map(\.event)
            var fromHistory: [PermissionEvent] = []
            try ledger.read { view in try view.history(subject: "kid-ben", fromSeq: 1, toSeq: view.point.seq) { fromHistory.append($0.event) } }
            #expect(fromHistory == exported.filter { $0.subject == "kid-ben" }, "with seq, recordedAt and hash")
            #expect(fromHistory.allSatisfy { $0.seq != nil && $0.hash != nil && $0.recordedAt != nil })
            #expect(fromHistory.map(\.recordedAt) == [try Self.t("09:01:01"), try Self.t("09:02:01"), try Self.t("09:03:01"),
                                                     try Self.t("09:10:01"), try Self.t("09:20:01"), try Self.t("09:21:01"),
                                                     try Self.t("10:20:01"), try Self.t("10:21:01")])
            let json = QueryJSON.historyResult(fromHistory.prefix(2).compactMap(RecordedEvent.init))
            #expect(json == "{\"events\":[" + EventJSON.encode(exported[1]) + "," + EventJSON.encode(exported[2]) + "]}")
            #expect(QueryJSON.historyResult([]) == #"{"events":[]}"#)
        }
    }

    @Test func firstSeqFromAPoint() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            try ledger.read(asOf: .seq(16)) { view throws in
                #expect(try view.firstSeq(from: .seq(7)) == 7)
                #expect(try view.firstSeq(from: .seq(0)) == 0)
                #expect(try view.firstSeq(from: .time(try Self.t("08:00:00"))) == 1)
                #expect(try view.firstSeq(from: .time(try Self.t("09:00:01"))) == 1, "recorded at T counts")
                #expect(try view.firstSeq(from: .time(try Self.t("09:00:01.000001"))) == 2)
                #expect(try view.firstSeq(from: .time(try Self.t("09:05:00"))) == 5, "5 and 6 share 09:05:01: the first of them")
                #expect(try view.firstSeq(from: .time(try Self.t("09:05:01"))) == 5)
                #expect(try view.firstSeq(from: .time(try Self.t("09:05:01.000001"))) == 7)
                #expect(try view.firstSeq(from: .time(try Self.t("10:40:01"))) == 16)
                #expect(try view.firstSeq(from: .time(try Self.t("10:40:01.000001"))) == 17, "after the last event: head + 1")
                #expect(try view.firstSeq(from: .time(Timestamp(microseconds: .max))) == 17)
                #expect(try view.firstSeq(from: .time(Timestamp(microseconds: .min))) == 1)
                #expect(try view.firstSeq(from: .now) == 17)
            }
            // --from a time --to a time, for one subject: events recorded in [09:05:00, 09:40:01].
            try ledger.read(asOf: .time(try Self.t("09:40:01"))) { view throws in
                #expect(view.point.seq == 11)
                let low = try view.firstSeq(from: .time(try Self.t("09:05:00")))
                #expect(try Self.history(view, subject: "kid-ava", from: low) == [5, 6, 7, 11])
                #expect(try Self.history(view, from: low) == [5, 6, 7, 8, 9, 10, 11])
            }
            // An empty range: from after to.
            try ledger.read(asOf: .time(try Self.t("09:04:00"))) { view throws in
                let low = try view.firstSeq(from: .time(try Self.t("09:10:00")))
                #expect(low == 8)
                #expect(try Self.history(view, from: low) == [])
            }
        }
    }

    // MARK: statistics

    static func counts(_ stats: LedgerStatistics) -> [String: UInt64] {
        Dictionary(uniqueKeysWithValues: EventType.allCases.map { ($0.rawValue, stats.eventsByType[$0] ?? 0) })
    }

    static func states(_ stats: LedgerStatistics) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: QuestionState.allCases.map { ($0.rawValue, stats.questionsByState[$0] ?? 0) })
    }

    @Test func statisticsAtPoints() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            let head = try ledger.head()
            #expect(head.seq == 16)
            // At the head (clock 10:40:01): q1 expired by the clock, q6 by an event.
            let full = try await ledger.statistics(asOf: .seq(16))
            #expect(full.head == head)
            #expect(Self.counts(full) == ["question.asked": 6, "question.sendCanceled": 1, "question.askFailed": 1, "question.answered": 2,
                                          "question.expired": 1, "handles.observed": 1, "permission.changed": 4, "subject.erased": 0])
            #expect(full.eventsByType.values.reduce(0, +) == 16)
            #expect(full.subjects == 2)
            #expect(Self.states(full) == ["pending": 0, "approved": 1, "denied": 1, "canceled": 1, "failed": 1, "expired": 2])

            // seq:4 (clock 09:03:01): the head is still the log's head.
            let early = try await ledger.statistics(asOf: .seq(4))
            #expect(early.head == head)
            #expect(Self.counts(early) == ["question.asked": 2, "question.sendCanceled": 0, "question.askFailed": 0, "question.answered": 1,
                                           "question.expired": 0, "handles.observed": 0, "permission.changed": 1, "subject.erased": 0])
            #expect(early.subjects == 2)
            #expect(Self.states(early) == ["pending": 1, "approved": 1, "denied": 0, "canceled": 0, "failed": 0, "expired": 0])

            // seq:1: one subject, one pending question.
            let first = try await ledger.statistics(asOf: .seq(1))
            #expect(first.subjects == 1)
            #expect(first.eventsByType.values.reduce(0, +) == 1)
            #expect(Self.states(first)["pending"] == 1)

            // At a time: q1's expiresAt 09:30:00 is the boundary (expired at or before the clock).
            let beforeStats = try await ledger.statistics(asOf: .time(try Self.t("09:29:59.999999")))
            let before = (beforeStats.point.seq, beforeStats)
            #expect(before.0 == 10)
            #expect(Self.states(before.1) == ["pending": 1, "approved": 1, "denied": 1, "canceled": 1, "failed": 0, "expired": 0])
            let atStats = try await ledger.statistics(asOf: .time(try Self.t("09:30:00")))
            let at = (atStats.point.seq, atStats)
            #expect(at.0 == 10)
            #expect(Self.counts(at.1) == ["question.asked": 4, "question.sendCanceled": 1, "question.askFailed": 0, "question.answered": 2,
                                          "question.expired": 0, "handles.observed": 0, "permission.changed": 3, "subject.erased": 0])
            #expect(Self.states(at.1) == ["pending": 0, "approved": 1, "denied": 1, "canceled": 1, "failed": 0, "expired": 1])

            // seq:0: nothing.
            let none = try await ledger.statistics(asOf: .seq(0))
            #expect(none.eventsByType.values.reduce(0, +) == 0)
            #expect(none.subjects == 0)
            #expect(none.questionsByState.values.reduce(0, +) == 0)
        }
    }

    @Test func statisticsJSON() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            var stats = try await ledger.statistics(asOf: .seq(4))
            stats.sizes.fileBytes = 4096
            #expect(stats.keyFile == ledger.path + "/ledger.key")
            stats.keyFile = "/keys/family.key"
            let json = QueryJSON.statisticsResult(stats)
            let head = try ledger.head()
            #expect(json == #"{"asOf":{"seq":4,"time":"2026-11-20T09:03:01Z"},"head":{"seq":16,"hash":""# + head.hash.description
                + #"","recordedAt":"2026-11-20T10:40:01Z"},"events":4,"eventsByType":{"question.asked":2,"question.sendCanceled":0,"#
                + #""question.askFailed":0,"question.answered":1,"question.expired":0,"handles.observed":0,"permission.changed":1,"subject.erased":0},"#
                + #""subjects":2,"questions":2,"questionsByState":{"pending":1,"approved":1,"denied":0,"canceled":0,"failed":0,"expired":0},"#
                + #""fileBytes":4096,"keyFile":"/keys/family.key","migratedFrom":null}"#)
        }
    }

    // MARK: diff

    struct Q: Hashable { var id: String; var subject: String; var from: QuestionState?; var to: QuestionState? }
    struct H: Hashable { var subject: String; var grant: KnownGrant }
    struct P: Hashable { var subject: String; var permission: SystemPermission; var from: SystemPermission.State?; var to: SystemPermission.State? }

    static func parts(_ diff: LedgerDiff) -> (questions: [Q], added: [H], removed: [H], permissions: [P]) {
        (diff.questions.map { Q(id: $0.id.uuidString, subject: $0.subject, from: $0.from, to: $0.to) },
         diff.handlesAdded.map { H(subject: $0.subject, grant: KnownGrant($0.handle)) },
         diff.handlesRemoved.map { H(subject: $0.subject, grant: KnownGrant($0.handle)) },
         diff.permissions.map { P(subject: $0.subject, permission: $0.permission, from: $0.from, to: $0.to) })
    }

    static func diff(_ ledger: Ledger, from: AsOf, to: AsOf, subject: String? = nil) throws -> LedgerDiff {
        try ledger.read(asOf: from) { view in try view.diff(to: try view.at(to), subject: subject) }
    }

    /// Erased handles of one kind have no values to tell them apart: the diff tells them apart as stored, so that
    /// a handle that became known, or stopped being known, before an erasure is still one change, not none.
    @Test func diffTellsErasedHandlesOfOneKindApart() async throws {
        try await withLedger { ledger in
            try await ledger.append(json:
                JSONLine.observed("d1", checked: [("tinker", "custom")], known: [("tinker", "custom")], at: "09:00:00", recorded: "09:00:01"),
                JSONLine.observed("d2", checked: [("pixel", "custom")], known: [("pixel", "custom")], at: "09:30:00", recorded: "09:30:01"),
                JSONLine.observed("d3", checked: [("tinker", "custom")], known: [], at: "09:40:00", recorded: "09:40:01"))
            try await ledger.append([try KeyErasureTests.erasure("erase", subject: "kid-ava", at: "2026-11-20T10:00:00Z")])
            let oneTwo = try Self.diff(ledger, from: .seq(1), to: .seq(2))
            #expect(oneTwo.handlesAdded.count == 1 && oneTwo.handlesRemoved.isEmpty, "\(oneTwo)")
            #expect(oneTwo.handlesAdded.first?.handle.erased == ErasureMark(seq: 4, basis: .guardianRequest))
            let oneThree = try Self.diff(ledger, from: .seq(1), to: .seq(3))
            #expect(oneThree.handlesAdded.count == 1 && oneThree.handlesRemoved.count == 1, "\(oneThree)")
            #expect(oneThree.handlesAdded.first?.handle.since != oneThree.handlesRemoved.first?.handle.since)
            #expect(try Self.diff(ledger, from: .seq(2), to: .seq(2)).handlesAdded.isEmpty)
        }
    }

    @Test func diffBetweenTwoSeqs() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            let pixelpal = KnownGrant(handle: try Self.custom("pixelpal"), since: try Self.t("09:03:00"), until: try Self.t("10:03:00"),
                                      source: .question(QID.uuid(AQ.q2)))
            let comet = KnownGrant(handle: try Self.custom("comet_rider"), since: try Self.t("09:40:00"), until: nil, source: .observation(11))

            // seq:4 (clock 09:03:01) to seq:12 (clock 10:10:01).
            let d = try Self.diff(ledger, from: .seq(4), to: .seq(12))
            #expect(try d.from.seq == 4 && d.from.time == (try Self.t("09:03:01")))
            #expect(try d.to.seq == 12 && d.to.time == (try Self.t("10:10:01")))
            let all = Self.parts(d)
            #expect(all.questions == [
                Q(id: AQ.q1, subject: "kid-ava", from: .pending, to: .expired),  // by the clock
                Q(id: AQ.q3, subject: "kid-ava", from: nil, to: .denied),        // asked and answered in between
                Q(id: AQ.q4, subject: "kid-ben", from: nil, to: .canceled),
            ], "q2 stayed approved")
            #expect(all.added == [H(subject: "kid-ava", grant: comet)])
            #expect(all.removed == [H(subject: "kid-ben", grant: pixelpal)], "pixelpal's hour lapsed at 10:03")
            #expect(all.permissions == [
                P(subject: "kid-ava", permission: .microphone, from: nil, to: .authorized),
                P(subject: "kid-ben", permission: .camera, from: .notDetermined, to: .authorized),
            ])

            // Subject filter.
            let ben = Self.parts(try Self.diff(ledger, from: .seq(4), to: .seq(12), subject: "kid-ben"))
            #expect(ben.questions == [Q(id: AQ.q4, subject: "kid-ben", from: nil, to: .canceled)])
            #expect(ben.added == [])
            #expect(ben.removed == [H(subject: "kid-ben", grant: pixelpal)])
            #expect(ben.permissions == [P(subject: "kid-ben", permission: .camera, from: .notDetermined, to: .authorized)])
            let ava = Self.parts(try Self.diff(ledger, from: .seq(4), to: .seq(12), subject: "kid-ava"))
            #expect(ava.questions.map(\.id) == [AQ.q1, AQ.q3])
            #expect(ava.added == [H(subject: "kid-ava", grant: comet)])
            #expect(ava.removed == [])
            #expect(ava.permissions == [P(subject: "kid-ava", permission: .microphone, from: nil, to: .authorized)])
            let nobody = Self.parts(try Self.diff(ledger, from: .seq(4), to: .seq(12), subject: "kid-zed"))
            #expect(nobody.questions.isEmpty && nobody.added.isEmpty && nobody.removed.isEmpty && nobody.permissions.isEmpty)

            // Newly asked questions come from nil; a handle approved in between is added.
            let start = Self.parts(try Self.diff(ledger, from: .seq(0), to: .seq(4)))
            #expect(start.questions == [
                Q(id: AQ.q1, subject: "kid-ava", from: nil, to: .pending),
                Q(id: AQ.q2, subject: "kid-ben", from: nil, to: .approved),
            ])
            #expect(start.added == [H(subject: "kid-ben", grant: pixelpal)])
            #expect(start.removed == [])
            #expect(start.permissions == [P(subject: "kid-ben", permission: .camera, from: nil, to: .notDetermined)])

            // No change between a point and itself.
            let same = Self.parts(try Self.diff(ledger, from: .seq(7), to: .seq(7)))
            #expect(same.questions.isEmpty && same.added.isEmpty && same.removed.isEmpty && same.permissions.isEmpty)

            // The JSON form (docs/spec/CLI.md): subject on each handle and permission only without a subject filter.
            let benJSON = QueryJSON.diffResult(try Self.diff(ledger, from: .seq(4), to: .seq(12), subject: "kid-ben"), includeSubject: false)
            #expect(benJSON == #"{"from":{"seq":4,"time":"2026-11-20T09:03:01Z"},"to":{"seq":12,"time":"2026-11-20T10:10:01Z"},"#
                + #""questions":[{"id":"A0D17000-0000-4000-8000-000000000004","subject":"kid-ben","from":null,"to":"canceled"}],"#
                + #""handles":{"added":[],"removed":[{"value":"pixelpal","kind":"custom","since":"2026-11-20T09:03:00Z","#
                + #""until":"2026-11-20T10:03:00Z","source":{"question":"A0D17000-0000-4000-8000-000000000002"}}]},"#
                + #""permissions":[{"permission":"camera","from":"notDetermined","to":"authorized"}]}"#)
            let allJSON = QueryJSON.diffResult(d, includeSubject: true)
            #expect(allJSON.contains(#""added":[{"subject":"kid-ava","value":"comet_rider","kind":"custom","since":"2026-11-20T09:40:00Z","until":null,"source":{"observation":11}}]"#))
            #expect(allJSON.contains(#"{"subject":"kid-ava","permission":"microphone","from":null,"to":"authorized"}"#))
        }
    }

    @Test func diffSeesAGrantLapseByTheClockAlone() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            let pixelpal = KnownGrant(handle: try Self.custom("pixelpal"), since: try Self.t("09:03:00"), until: try Self.t("10:03:00"),
                                      source: .question(QID.uuid(AQ.q2)))
            // 09:45 and 10:05 are both after seq 11 and before seq 12: the same events, only the clock differs.
            let d = try Self.diff(ledger, from: .time(try Self.t("09:45:00")), to: .time(try Self.t("10:05:00")))
            #expect(d.from.seq == 11 && d.to.seq == 11)
            let lapse = Self.parts(d)
            #expect(lapse.questions.isEmpty, "q1 had already expired at 09:30")
            #expect(lapse.added.isEmpty)
            #expect(lapse.removed == [H(subject: "kid-ben", grant: pixelpal)])
            #expect(lapse.permissions.isEmpty)

            // The boundary: lapsed at until exactly (known while until > T).
            #expect(Self.parts(try Self.diff(ledger, from: .time(try Self.t("09:45:00")), to: .time(try Self.t("10:03:00")))).removed.count == 1)
            let justBefore = Self.parts(try Self.diff(ledger, from: .time(try Self.t("09:45:00")), to: .time(try Self.t("10:02:59.999999"))))
            #expect(justBefore.removed.isEmpty && justBefore.added.isEmpty && justBefore.questions.isEmpty)

            // A question expiring by the clock alone between two times.
            let expiry = Self.parts(try Self.diff(ledger, from: .time(try Self.t("09:25:00")), to: .time(try Self.t("09:35:00"))))
            #expect(expiry.questions == [Q(id: AQ.q1, subject: "kid-ava", from: .pending, to: .expired)])
            #expect(expiry.added.isEmpty && expiry.removed.isEmpty && expiry.permissions.isEmpty)
        }
    }

    // MARK: at(_:)

    @Test func atGivesAnotherViewOfTheSameSnapshot() async throws {
        try await Self.withScenario(Self.scenario) { ledger async throws in
            try ledger.read(asOf: .seq(4)) { view throws in
                let later = try view.at(.seq(12))
                #expect(try later.point.seq == 12 && later.point.time == (try Self.t("10:10:01")))
                #expect(later.head == view.head)
                #expect(try later.knownHandles(subject: "kid-ava").map(\.handle.value) == ["comet_rider"])
                #expect(try later.knownHandles(subject: "kid-ben").isEmpty, "pixelpal lapsed at 10:03")
                // The first view still answers for its own point.
                #expect(view.point.seq == 4)
                #expect(try view.knownHandles(subject: "kid-ava").isEmpty)
                #expect(try view.knownHandles(subject: "kid-ben").map(\.handle.value) == ["pixelpal"])
                let atTime = try view.at(.time(try Self.t("09:30:00")))
                #expect(try atTime.point.seq == 10 && atTime.point.time == (try Self.t("09:30:00")))
                #expect(try atTime.question(QID.uuid(AQ.q1))?.state == .expired)
                #expect(try view.question(QID.uuid(AQ.q1))?.state == .pending)
                #expect(ledgerError { _ = try view.at(.seq(17)) }?.kind == .notFound)
            }

            // Events appended while a view is open are invisible to it and to every view `at` derives from it.
            let more = [
                JSONLine.asked("s-17", question: "A0D17000-0000-4000-8000-000000000007", subject: "kid-cleo", at: "11:00:00", recorded: "11:00:01"),
                JSONLine.permission("s-18", subject: "kid-cleo", "camera", "denied", at: "11:01:00", recorded: "11:01:01"),
            ]
            let extra = try more.map { try decodeEvent($0) }
            try ledger.read(asOf: .now) { view throws in
                #expect(view.point.seq == 16)
                let done = DispatchSemaphore(value: 0)
                let result = LockedResult()
                DispatchQueue.global().async {
                    result.set(Result { try ledger.appendSynchronously(extra).head.seq })
                    done.signal()
                }
                done.wait()
                #expect(try result.get() == 18, "the append committed while the view was open")
                #expect(try view.at(.now).point.seq == 16)
                #expect(try view.at(.now).point.time == view.point.time)
                #expect(try view.at(.now).subjects() == ["kid-ava", "kid-ben"])
                #expect(ledgerError { _ = try view.at(.seq(17)) }?.kind == .notFound)
                #expect(try view.at(.time(try Self.t("12:00:00"))).point.seq == 16)
                #expect(try view.statistics(sizes: .init(fileBytes: 0, usedBytes: 0, mapBytes: 0)).events == 16)
            }
            #expect(try ledger.read { try $0.subjects() } == ["kid-ava", "kid-ben", "kid-cleo"])
        }
    }

    /// A `Result` handed from one thread to another.
    final class LockedResult: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<UInt64, any Error>?
        func set(_ r: Result<UInt64, any Error>) { lock.withLock { value = r } }
        func get() throws -> UInt64? { try lock.withLock { value }?.get() }
    }

    // MARK: handleRecords

    /// kid-ava's q1 is about dragonslayer42 and a phone; kid-ben's q2 about dragonslayer42.
    ///
    /// | seq | event |
    /// |---|---|
    /// | 1 | kid-ava q1 asked (dragonslayer42, +1 (555) 010-7001) |
    /// | 2 | kid-ava q1 answered approve (messages) at 09:05 |
    /// | 3 | kid-ben q2 asked (dragonslayer42) |
    /// | 4 | kid-ben q2 answered approve in person at 09:15 |
    /// | 5 | kid-ava observed: dragonslayer42 checked, not known (revoked) |
    /// | 6 | kid-ben observed: dragonslayer42 and robo_rex checked, dragonslayer42 known |
    static let twoChildren: [String] = [
        JSONLine.asked("h-01", question: AQ.q1, subject: "kid-ava", at: "09:00:00", recorded: "09:00:01",
                       people: [("dragonslayer42", "custom"), ("+1 (555) 010-7001", "phoneNumber")]),
        JSONLine.answered("h-02", question: AQ.q1, choice: "approve", subject: "kid-ava", at: "09:05:00", recorded: "09:05:01"),
        JSONLine.asked("h-03", question: AQ.q2, subject: "kid-ben", at: "09:10:00", recorded: "09:10:01"),
        JSONLine.answered("h-04", question: AQ.q2, choice: "approve", via: "inPerson", subject: "kid-ben", at: "09:15:00", recorded: "09:15:01"),
        JSONLine.observed("h-05", subject: "kid-ava", checked: [("dragonslayer42", "custom")], known: [], at: "09:20:00", recorded: "09:20:01"),
        JSONLine.observed("h-06", subject: "kid-ben", checked: [("dragonslayer42", "custom"), ("robo_rex", "custom")],
                          known: [("dragonslayer42", "custom")], at: "09:25:00", recorded: "09:25:01"),
    ]

    /// A record's plain parts: subject, seq, known, since, until, source.
    struct R: Hashable {
        var subject: String
        var seq: UInt64
        var known: Bool
        var since: Timestamp
        var until: Timestamp?
        var source: HandleSource
    }

    /// A record's ending as a plain value (``HandleRecord/Ending``'s initializer is internal).
    struct E: Hashable {
        var cause: HandleRecord.Ending.Cause
        var at: Timestamp
        var seq: UInt64?
        var knownAfter: Bool
    }

    static func ending(_ record: HandleRecord) -> E? {
        record.ended.map { E(cause: $0.cause, at: $0.at, seq: $0.seq, knownAfter: $0.knownAfter) }
    }

    static func plain(_ records: [HandleRecord]) -> [R] {
        records.map { R(subject: $0.subject, seq: $0.seq, known: $0.known, since: $0.since, until: $0.until, source: $0.source) }
    }

    @Test func handleRecordsAcrossSubjectsWithObservations() async throws {
        try await Self.withScenario(Self.twoChildren) { ledger async throws in
            let dragon = try Self.custom("dragonslayer42")
            let q1 = QID.uuid(AQ.q1), q2 = QID.uuid(AQ.q2)
            try ledger.read(asOf: .seq(6)) { view throws in
                let records = try view.handleRecords(dragon)
                #expect(Self.plain(records) == [
                    R(subject: "kid-ava", seq: 2, known: true, since: try Self.t("09:05:00"), until: nil, source: .question(q1)),
                    R(subject: "kid-ava", seq: 5, known: false, since: try Self.t("09:20:00"), until: nil, source: .observation(5)),
                    R(subject: "kid-ben", seq: 4, known: true, since: try Self.t("09:15:00"), until: nil, source: .question(q2)),
                    R(subject: "kid-ben", seq: 6, known: true, since: try Self.t("09:25:00"), until: nil, source: .observation(6)),
                ])
                try #require(records.count == 4)
                #expect(records.allSatisfy { $0.handle == dragon })
                // Endings: the observation revoked kid-ava's approval, and confirmed kid-ben's.
                #expect(Self.ending(records[0]) == E(cause: .observation, at: try Self.t("09:20:00"), seq: 5, knownAfter: false))
                #expect(Self.ending(records[1]) == nil)
                #expect(Self.ending(records[2]) == E(cause: .observation, at: try Self.t("09:25:00"), seq: 6, knownAfter: true))
                #expect(Self.ending(records[3]) == nil)
                // The approving question, as of the view's point.
                let ava = try #require(records[0].question)
                #expect(ava.question.id == q1 && ava.state == .approved && ava.choice?.id == "approve" && ava.via == .messages)
                #expect(try ava.resolvedAt == (try Self.t("09:05:00")) && ava.askedAt == (try Self.t("09:00:00")) && !ava.late)
                let ben = try #require(records[2].question)
                #expect(ben.question.id == q2 && ben.state == .approved && ben.choice?.id == "approve" && ben.via == .inPerson)
                #expect(records[1].question == nil && records[3].question == nil, "observations have no question")

                // Filtering by subject.
                #expect(Self.plain(try view.handleRecords(dragon, subject: "kid-ben")).map(\.seq) == [4, 6])
                #expect(Self.plain(try view.handleRecords(dragon, subject: "kid-ava")).map(\.seq) == [2, 5])
                #expect(try view.handleRecords(dragon, subject: "kid-zed").isEmpty)
                #expect(try view.handleRecords(dragon, subject: "kid-a").isEmpty)
                // A handle only ever observed as not known.
                #expect(Self.plain(try view.handleRecords(try Self.custom("robo_rex"))) == [
                    R(subject: "kid-ben", seq: 6, known: false, since: try Self.t("09:25:00"), until: nil, source: .observation(6)),
                ])
                // The phone, found by another spelling of the same number; it was not checked, so its approval holds.
                let phone = try view.handleRecords(try CommunicationHandle(value: "+1 555-010-7001", kind: .phoneNumber))
                #expect(Self.plain(phone) == [
                    R(subject: "kid-ava", seq: 2, known: true, since: try Self.t("09:05:00"), until: nil, source: .question(q1)),
                ])
                #expect(phone.first?.handle.value == "+15550107001")
                #expect(phone.first.map(Self.ending) == .some(nil))
                // Handles never seen, and other kinds with the same value.
                #expect(try view.handleRecords(try Self.custom("ghost_user")).isEmpty)
                #expect(try view.handleRecords(try Self.custom("Dragonslayer42")).isEmpty, "custom handles are case-sensitive")
                #expect(try view.handleRecords(try CommunicationHandle(value: "5550107001", kind: .phoneNumber)).isEmpty)
            }
            // Earlier points: nothing has ended yet; kid-ben has no record before seq 4.
            try ledger.read(asOf: .seq(4)) { view throws in
                let records = try view.handleRecords(dragon)
                #expect(Self.plain(records).map { "\($0.subject)@\($0.seq)" } == ["kid-ava@2", "kid-ben@4"])
                #expect(records.allSatisfy { $0.ended == nil })
                #expect(try view.handleRecords(try Self.custom("robo_rex")).isEmpty)
                let atTwo = try view.at(.seq(2)).handleRecords(dragon)
                #expect(Self.plain(atTwo).map { "\($0.subject)@\($0.seq)" } == ["kid-ava@2"])
                #expect(try view.at(.seq(1)).handleRecords(dragon).isEmpty, "asked but not yet approved")
            }
            try ledger.read(asOf: .seq(5)) { view throws in
                let records = try view.handleRecords(dragon)
                #expect(records.map(\.ended?.cause) == [.observation, nil, nil])
            }
        }
    }

    /// kid-ava's pixelpal: a one-hour approval that lapses, a second one replaced by a permanent approval,
    /// and a two-hour approval that does not shorten the permanent one.
    ///
    /// | seq | event |
    /// |---|---|
    /// | 1, 2 | q1 asked; approve-1h at 10:05 (until 11:05) |
    /// | 3 | camera (clock 11:10:01) |
    /// | 4, 5 | q2 asked; approve-1h at 11:30 (until 12:30) |
    /// | 6, 7 | q3 asked; approve (permanent) at 11:45 |
    /// | 8 | microphone (clock 13:00:01) |
    /// | 9, 10 | q4 asked; approve-2h at 13:15: changes nothing |
    static let grants: [String] = [
        JSONLine.asked("t-01", question: AQ.q1, at: "10:00:00", recorded: "10:00:01", people: [("pixelpal", "custom")], choices: JSONLine.timeLimitedChoices),
        JSONLine.answered("t-02", question: AQ.q1, choice: "approve-1h", at: "10:05:00", recorded: "10:05:01"),
        JSONLine.permission("t-03", "camera", "authorized", at: "11:10:00", recorded: "11:10:01"),
        JSONLine.asked("t-04", question: AQ.q2, at: "11:20:00", recorded: "11:20:01", people: [("pixelpal", "custom")], choices: JSONLine.timeLimitedChoices),
        JSONLine.answered("t-05", question: AQ.q2, choice: "approve-1h", at: "11:30:00", recorded: "11:30:01"),
        JSONLine.asked("t-06", question: AQ.q3, at: "11:40:00", recorded: "11:40:01", people: [("pixelpal", "custom")], choices: JSONLine.timeLimitedChoices),
        JSONLine.answered("t-07", question: AQ.q3, choice: "approve", at: "11:45:00", recorded: "11:45:01"),
        JSONLine.permission("t-08", "microphone", "denied", at: "13:00:00", recorded: "13:00:01"),
        JSONLine.asked("t-09", question: AQ.q4, at: "13:10:00", recorded: "13:10:01", people: [("pixelpal", "custom")], choices: JSONLine.timeLimitedChoices),
        JSONLine.answered("t-10", question: AQ.q4, choice: "approve-2h", at: "13:15:00", recorded: "13:15:01"),
    ]

    @Test func handleRecordsLapseAndReplacement() async throws {
        try await Self.withScenario(Self.grants) { ledger async throws in
            let pixelpal = try Self.custom("pixelpal")
            let (q1, q2, q3) = (QID.uuid(AQ.q1), QID.uuid(AQ.q2), QID.uuid(AQ.q3))
            try ledger.read(asOf: .seq(10)) { view throws in
                let records = try view.handleRecords(pixelpal)
                #expect(Self.plain(records) == [
                    R(subject: "kid-ava", seq: 2, known: true, since: try Self.t("10:05:00"), until: try Self.t("11:05:00"), source: .question(q1)),
                    R(subject: "kid-ava", seq: 5, known: true, since: try Self.t("11:30:00"), until: try Self.t("12:30:00"), source: .question(q2)),
                    R(subject: "kid-ava", seq: 7, known: true, since: try Self.t("11:45:00"), until: nil, source: .question(q3)),
                ], "q4's two-hour approval does not shorten q3's permanent one: no new version")
                try #require(records.count == 3)
                #expect(Self.ending(records[0]) == E(cause: .lapse, at: try Self.t("11:05:00"), seq: nil, knownAfter: false))
                #expect(Self.ending(records[1]) == E(cause: .approval, at: try Self.t("11:45:00"), seq: 7, knownAfter: true))
                #expect(Self.ending(records[2]) == nil)
                #expect(records.map { $0.question?.choice?.id } == ["approve-1h", "approve-1h", "approve"])
                #expect(records.map { $0.question?.via } == [.messages, .messages, .messages])
                #expect(try view.question(QID.uuid(AQ.q4))?.state == .approved)
                #expect(try view.knownHandles(subject: "kid-ava").map(KnownGrant.init) == [
                    KnownGrant(handle: pixelpal, since: try Self.t("11:45:00"), until: nil, source: .question(q3)),
                ])
            }
            // The lapse is an ending only once the view's clock has reached until.
            #expect(try ledger.read(asOf: .seq(2)) { try $0.handleRecords(pixelpal).map(Self.ending) } == [nil])
            #expect(try ledger.read(asOf: .time(try Self.t("11:04:59.999999"))) { try $0.handleRecords(pixelpal).map(Self.ending) } == [nil])
            #expect(try ledger.read(asOf: .time(try Self.t("11:05:00"))) { try $0.handleRecords(pixelpal).map(Self.ending) }
                == [E(cause: .lapse, at: try Self.t("11:05:00"), seq: nil, knownAfter: false)])
            #expect(try ledger.read(asOf: .seq(3)) { try $0.handleRecords(pixelpal).map(\.ended?.cause) } == [.lapse])
            // A second grant after the lapse does not turn the first one's ending into a replacement.
            try ledger.read(asOf: .seq(5)) { view throws in
                let records = try view.handleRecords(pixelpal)
                #expect(records.map(\.seq) == [2, 5])
                #expect(records.map(\.ended?.cause) == [.lapse, nil])
            }
            // At 12:00 (before q2's grant would have lapsed, after q3's approval): replaced by an approval.
            try ledger.read(asOf: .seq(7)) { view throws in
                #expect(try view.handleRecords(pixelpal).map(\.ended?.cause) == [.lapse, .approval, nil])
            }
            // Another subject with no record of the handle.
            #expect(try ledger.read { try $0.handleRecords(pixelpal, subject: "kid-ben") }.isEmpty)
        }
    }

    @Test func handleRecordsJSON() async throws {
        try await Self.withScenario(Self.twoChildren) { ledger async throws in
            let dragon = try Self.custom("dragonslayer42")
            let json = try ledger.read(asOf: .seq(6)) { view throws in
                QueryJSON.handleRecordsResult(try view.handleRecords(dragon, subject: "kid-ava"), handle: [dragon], at: view.point)
            }
            #expect(json == #"{"asOf":{"seq":6,"time":"2026-11-20T09:25:01Z"},"handles":[{"value":"dragonslayer42","kind":"custom"}],"records":["#
                + #"{"subject":"kid-ava","handle":{"value":"dragonslayer42","kind":"custom"},"seq":2,"known":true,"since":"2026-11-20T09:05:00Z","until":null,"#
                + #""source":{"question":"A0D17000-0000-4000-8000-000000000001"},"question":{"id":"A0D17000-0000-4000-8000-000000000001","state":"approved","#
                + #""choice":{"id":"approve","title":"Approve","answer":"approval"},"via":"messages","askedAt":"2026-11-20T09:00:00Z","#
                + #""answeredAt":"2026-11-20T09:05:00Z","late":false},"ended":{"by":"observation","at":"2026-11-20T09:20:00Z","seq":5,"knownAfter":false}},"#
                + #"{"subject":"kid-ava","handle":{"value":"dragonslayer42","kind":"custom"},"seq":5,"known":false,"since":"2026-11-20T09:20:00Z","until":null,"#
                + #""source":{"observation":5},"question":null,"ended":null}]}"#)
        }
    }
}
