import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// The as-of guarantee of docs/spec/EVENTS.md ("As of"): for every fixture, at every seq (and at times between
/// events), the indexed answers (question states, known handles, permissions) equal those of a replay of the log
/// up to that point.
///
/// Two oracles:
/// - a ledger that holds only the first N events (the library's own projector, but no history to index);
/// - ``ReferenceModel``, an independent fold of the events written here from docs/spec/EVENTS.md's "State" rules,
///   which shares no code with the library's projector.
@Suite struct AsOfCorrectnessTests {
    // MARK: Which points to check

    /// Every seq for the small fixtures; every 10th seq plus the last for a long one.
    static func checkedSeqs(count: Int) -> [Int] {
        guard count > 100 else { return Array(0...count) }
        var seqs = Array(stride(from: 0, through: count, by: 10))
        if seqs.last != count { seqs.append(count) }
        return seqs
    }

    /// The midpoint between event N's `recordedAt` and event N+1's, when the latter is strictly later.
    /// `events` are 0-based: event N is `events[N - 1]`. For N = 0, a time one second before the first event.
    static func timeAfter(seq n: Int, in events: [PermissionEvent]) -> Timestamp? {
        guard n < events.count, let next = events[n].recordedAt else { return nil }
        if n == 0 { return Timestamp(microseconds: next.microseconds - 1_000_000) }
        guard let current = events[n - 1].recordedAt, next > current else { return nil }
        return Timestamp(microseconds: current.microseconds + (next.microseconds - current.microseconds) / 2)
    }

    // MARK: 1a. Prefix replay

    /// A ledger as of seq N answers exactly what a ledger holding only the first N events answers, both at
    /// `seq:N` and at a time between event N and event N+1.
    @Test(arguments: Fixtures.valid)
    func asOfEqualsAPrefixReplay(name: String) async throws {
        try await withTwoLedgers { full, prefix async throws in
            try await full.importFixture(name)
            var events: [PermissionEvent] = []
            events += try storedEvents(full).map(\.event)
            try #require(!events.isEmpty)
            var appended = 0
            var timesChecked = 0
            // An erasure changes what every earlier point shows (docs/spec/PRIVACY.md): a ledger that stopped
            // before it shows the values it erased. So points are taken from the last erasure on.
            let lastErasure = lastErasureSeq(events)
            for n in Self.checkedSeqs(count: events.count) where n >= lastErasure {
                if n > appended {
                    let summary = try await prefix.append(Array(events[appended..<n]))
                    #expect(summary.appended == n - appended && summary.head.seq == UInt64(n), "\(name): re-appending events \(appended + 1)...\(n)")
                    appended = n
                }
                let seq = UInt64(n)
                #expect(try prefix.head().seq == seq)

                // At seq:N (the clock is event N's recordedAt).
                let (fullDigest, fullState) = try full.read(asOf: .seq(seq)) { (try $0.digest(), try $0.canonicalState()) }
                let (prefixDigest, prefixState) = try prefix.read(asOf: .seq(seq)) { (try $0.digest(), try $0.canonicalState()) }
                #expect(fullDigest == prefixDigest, "\(name): digest as of seq:\(n)")
                if fullState != prefixState {
                    Issue.record("\(name): canonical state as of seq:\(n) differs from a replay of the first \(n) events\n\(canonicalDiff(expected: prefixState, actual: fullState))")
                }

                // At a time T between event N and event N+1 (the clock is T).
                if let t = Self.timeAfter(seq: n, in: events) {
                    timesChecked += 1
                    // The digest is the SHA-256 of the canonical state: the states are compared (and shown) when it differs.
                    let (point, fullDigestT) = try full.read(asOf: .time(t)) { ($0.point, try $0.digest()) }
                    let (prefixPoint, prefixDigestT) = try prefix.read(asOf: .time(t)) { ($0.point, try $0.digest()) }
                    #expect(point.seq == seq && point.time == t, "\(name): as of \(t) is the point after event \(n), clock \(t)")
                    #expect(prefixPoint.seq == seq && prefixPoint.time == t)
                    if fullDigestT != prefixDigestT {
                        let fullStateT = try full.read(asOf: .time(t)) { try $0.canonicalState() }
                        let prefixStateT = try prefix.read(asOf: .time(t)) { try $0.canonicalState() }
                        Issue.record("\(name): digest as of \(t) (after seq \(n)) differs from a replay of the first \(n) events\n\(canonicalDiff(expected: prefixStateT, actual: fullStateT))")
                    }
                }
            }
            #expect(appended == events.count)
            // Every fixture has events with strictly increasing recordedAt somewhere, so times were checked (after
            // its last erasure, when it ends with one, there is no time left to check).
            #expect(timesChecked > 0 || lastErasure == events.count)
        }
    }

    // MARK: 1b. The independent reference model

    /// At every seq of every fixture, the indexed answers equal those of ``ReferenceModel`` folded up to that
    /// seq and evaluated at event N's `recordedAt`; also at times between events and after the last one.
    @Test(arguments: Fixtures.valid)
    func indexedAnswersEqualTheReferenceModel(name: String) async throws {
        try await withLedger { ledger async throws in
            let input = try Fixtures.fixture(name).events
            try await ledger.append(input)
            try Self.compareWithReferenceModel(ledger, input: input, name: name)
        }
    }

    /// Folds `input` (the events offered to `ledger`, duplicates included, in order) into a ``ReferenceModel``
    /// and compares the ledger with it at every seq, at every time between consecutive events with distinct
    /// `recordedAt`, and at times after the last event.
    static func compareWithReferenceModel(_ ledger: Ledger, input: [PermissionEvent], name: String) throws {
        var stored: [PermissionEvent] = []
        try ledger.forEachEvent { stored.append($0.event) }

        var model = ReferenceModel()
        // An erasure holds at every point, before it as after it (docs/spec/PRIVACY.md): the model knows from the
        // start which events the log's erasures erase.
        model.erasedSeqs = Set(stored.filter { $0.erased != nil }.compactMap(\.seq))
        var checkedSeqs = 0
        var mismatches = 0
        /// Compares the model at `clock` with the ledger as of `asOf`, which must be the point (seq, clock).
        func compare(_ asOf: AsOf, clock: Timestamp, label: String) throws {
            let expected = model.answers(at: clock)
            let (point, actual, knownFlags) = try ledger.read(asOf: asOf) { view in
                (view.point, try StateAnswers(view),
                 try model.everSeenHandles.map { try view.isKnownHandle($0.handle, subject: $0.subject) })
            }
            #expect(point.seq == model.seq && point.time == clock, "\(name) \(label): the point is seq \(model.seq), clock \(clock)")
            let differences = expected.differences(from: actual)
            if !differences.isEmpty {
                mismatches += 1
                if mismatches <= 5 {
                    let shown = differences.prefix(12).joined(separator: "\n  ")
                    Issue.record("\(name) as of \(label) (seq \(model.seq), clock \(clock)): the ledger disagrees with the reference model\n  \(shown)")
                }
            }
            let expectedFlags = model.everSeenHandles.map { model.isKnown($0.handle, subject: $0.subject, at: clock) }
            #expect(knownFlags == expectedFlags, "\(name) \(label): isKnownHandle for \(model.everSeenHandles)")
        }

        try compare(.seq(0), clock: .earliest, label: "seq:0")
        for (index, event) in input.enumerated() {
            let recordedAt = try #require(event.recordedAt, "the events give recordedAt")
            // A time between the previous event and this one (the model has not applied it yet).
            if model.seq > 0, let last = model.lastRecordedAt, recordedAt > last {
                let t = Timestamp(microseconds: last.microseconds + (recordedAt.microseconds - last.microseconds) / 2)
                try compare(.time(t), clock: t, label: "\(t)")
            }
            guard model.apply(event) else { continue }  // a duplicate: nothing appended
            let n = Int(model.seq)
            try #require(n <= stored.count, "\(name): the model appended more events than the ledger (event \(index + 1) of the input)")
            #expect(stored[n - 1].id == event.id, "\(name): the model's seq \(n) is \(event.id), the ledger's is \(stored[n - 1].id)")
            checkedSeqs += 1
            try compare(.seq(model.seq), clock: recordedAt, label: "seq:\(n)")
        }
        #expect(Int(model.seq) == stored.count, "\(name): the model and the ledger appended the same number of events")
        // After the last event: the clock alone expires questions and lapses grants.
        if let last = model.lastRecordedAt {
            for seconds: Int64 in [1, 3_600, 86_400 * 2] {
                let t = last.adding(seconds: seconds)
                try compare(.time(t), clock: t, label: "\(t) (after the last event)")
            }
        }
        #expect(checkedSeqs > 0)
        if mismatches > 5 { Issue.record("\(name): \(mismatches) points disagree in all (the first 5 are shown)") }
    }

    /// Cases the fixtures touch lightly, through the same comparison: time-limited approvals that do or do not
    /// shorten a current grant (longer, shorter, after a revocation, after an observation), late answers both
    /// ways, an answer recorded after a clock expiry, shared recordedAt values and duplicates.
    @Test func indexedAnswersEqualTheReferenceModelOnEdgeCases() async throws {
        let choices = JSONLine.timeLimitedChoices
        let q = (1...9).map { String(format: "E06E0000-0000-4000-8000-%012d", $0) }
        let lines = [
            JSONLine.asked("e-01", question: q[0], at: "10:00:00", recorded: "10:00:01", people: [("h1", "custom")], choices: choices),
            JSONLine.answered("e-02", question: q[0], choice: "approve-2h", at: "10:00:30", recorded: "10:00:31"),  // h1 until 12:00:30
            JSONLine.asked("e-03", question: q[1], at: "10:10:00", recorded: "10:10:01", people: [("h1", "custom")], choices: choices),
            JSONLine.answered("e-04", question: q[1], choice: "approve-1h", at: "10:20:00", recorded: "10:20:01"),  // shorter: no change
            JSONLine.asked("e-05", question: q[2], at: "10:30:00", recorded: "10:30:01", people: [("h1", "custom")], choices: choices),
            JSONLine.answered("e-06", question: q[2], choice: "approve-2h", at: "11:00:00", recorded: "11:00:01"),  // longer: until 13:00
            JSONLine.observed("e-07", checked: [("h1", "custom")], known: [], at: "11:10:00", recorded: "11:10:01"),  // revoked
            JSONLine.asked("e-08", question: q[3], at: "11:20:00", recorded: "11:20:01", people: [("h1", "custom")], choices: choices),
            JSONLine.answered("e-09", question: q[3], choice: "approve-1h", at: "11:30:00", recorded: "11:30:01"),  // known again until 12:30
            JSONLine.asked("e-10", question: q[4], at: "11:40:00", recorded: "11:40:01",
                           people: [("h1", "custom"), ("+1 555 010 0042", "phoneNumber")], choices: choices, expiresAt: "12:00:00"),
            // Occurred before expiresAt, recorded at it: late. h1 until 13:59:59, the phone too.
            JSONLine.answered("e-11", question: q[4], choice: "approve-2h", at: "11:59:59", recorded: "12:00:00"),
            JSONLine.asked("e-12", question: q[5], at: "12:01:00", recorded: "12:01:01", people: [("h3", "custom")], expiresAt: "12:10:00"),
            JSONLine.expired("e-13", question: q[5], at: "12:05:00", recorded: "12:05:01"),
            JSONLine.answered("e-14", question: q[5], choice: "decline", at: "12:06:00", recorded: "12:06:01"),  // late, after the event
            JSONLine.asked("e-15", question: q[6], at: "12:07:00", recorded: "12:07:01", people: [("h1", "custom")], expiresAt: "12:08:00"),
            // Expired by the clock from 12:08 until this answer (occurred before expiresAt) is recorded: late, permanent.
            JSONLine.answered("e-16", question: q[6], choice: "approve", via: "default", at: "12:07:30", recorded: "12:09:00"),
            JSONLine.asked("e-17", question: q[7], subject: "kid-ben", at: "12:10:00", recorded: "12:10:00",
                           people: [("h4", "custom")], choices: choices, expiresAt: "12:20:00"),
            JSONLine.permission("e-18", subject: "kid-ben", "camera", "authorized", at: "12:10:00", recorded: "12:10:00"),
            JSONLine.permission("e-19", subject: "kid-ben", "camera", "denied", cause: "settings", at: "12:30:00", recorded: "12:30:01"),
            JSONLine.observed("e-20", subject: "kid-ben", checked: [("h1", "custom"), ("h4", "custom")], known: [("h4", "custom")],
                              at: "12:40:00", recorded: "12:40:01"),
            JSONLine.asked("e-21", question: q[8], subject: "kid-ben", at: "12:41:00", recorded: "12:41:01", people: [("h4", "custom")], choices: choices),
            // h4 is known by an observation, with no end: a one-hour approval does not shorten it.
            JSONLine.answered("e-22", question: q[8], choice: "approve-1h", subject: "kid-ben", at: "12:42:00", recorded: "12:42:01"),
            // The same answer again under another id, and an event redelivered: no-ops.
            JSONLine.answered("e-23", question: q[8], choice: "approve-1h", subject: "kid-ben", at: "12:43:00", recorded: "12:43:01"),
            JSONLine.permission("e-19", subject: "kid-ben", "camera", "denied", cause: "settings", at: "12:30:00", recorded: "12:44:01"),
            // q[7] was never answered: expired by the clock at 12:20.
            JSONLine.permission("e-25", subject: "kid-ava", "microphone", "askAgain", at: "14:00:00", recorded: "14:00:01"),
        ]
        try await withLedger { ledger async throws in
            let input = try lines.map { try decodeEvent($0) }
            let summary = try await ledger.append(input)
            #expect(summary.appended == 23 && summary.duplicates == 2)
            try Self.compareWithReferenceModel(ledger, input: input, name: "edge cases")
            // A few of the expected values, stated outright.
            try ledger.read(asOf: .seq(23)) { view throws in
                let questions = try view.questions()
                #expect(questions.map(\.state) == [.approved, .approved, .approved, .approved, .approved, .denied, .approved, .expired, .approved])
                #expect(questions.map(\.late) == [false, false, false, false, true, true, true, false, false])
                // At 14:00:01 the phone's two hours have lapsed; h1 holds q[6]'s permanent approval.
                let h1 = try CommunicationHandle(value: "h1", kind: .custom)
                let h1Grant = KnownGrant(handle: h1, since: try time(JSONLine.at("12:07:30")), until: nil, source: .question(QID.uuid(q[6])))
                #expect(try view.knownHandles(subject: "kid-ava").map(KnownGrant.init) == [h1Grant])
                #expect(try view.knownHandles(subject: "kid-ben").map(KnownGrant.init) == [
                    KnownGrant(handle: try CommunicationHandle(value: "h4", kind: .custom), since: try time(JSONLine.at("12:40:00")),
                               until: nil, source: .observation(20)),
                ])
                #expect(try view.isKnownHandle(h1, subject: "kid-ben") == false, "observed not known for kid-ben")
            }
            try ledger.read(asOf: .seq(22)) { view throws in
                #expect(try view.knownHandles(subject: "kid-ava").map(\.handle.value) == ["h1", "+15550100042"])
            }
        }
    }

    /// Known handles are read in one walk of the subject's versions in `handles`, each handle at its latest
    /// version at or before the point (stepped to while there are few, sought when there are many). Many
    /// observations of one subject give its handles many versions; among the handles, values over 200 bytes
    /// are keyed by their hash, so key order is not the handles' order, and non-ASCII values order by code
    /// point. Every seq is compared with the reference model.
    @Test func knownHandlesOverManyVersionsEqualTheReferenceModel() async throws {
        let long = String(repeating: "a", count: 205)
        let pool: [(String, String)] = [
            ("h1", "custom"), ("h10", "custom"), ("h2", "custom"), ("é-chat", "custom"), ("Zed", "custom"),
            (long + "1", "custom"), (long + "2", "custom"), (String(repeating: "z", count: 210), "custom"),
            // Either side of the longest value a key holds as it is (200 bytes), and a long email address.
            (String(repeating: "b", count: 200), "custom"), (String(repeating: "b", count: 201), "custom"),
            ("a@example.com", "emailAddress"), ("b@example.com", "emailAddress"),
            (String(repeating: "m", count: 230) + "@example.com", "emailAddress"),
            ("+15550100001", "phoneNumber"), ("5550100002", "phoneNumber"),
        ]
        func clock(_ i: Int) -> String {
            let s = 36_000 + i * 10
            return String(format: "%02d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        }
        // kid-ben's handles are all short: its keys are in handle order.
        let short = pool.filter { $0.0.utf8.count <= 200 }
        var lines: [String] = []
        for i in 0..<90 {
            // Three handles checked per observation; which of them are known moves with i.
            for (subject, handles) in [("kid-ava", pool), ("kid-ben", short)] {
                let checked = (0..<3).map { handles[(i * 5 + $0 * 7) % handles.count] }
                let known = checked.enumerated().filter { (i + $0.offset) % 3 != 0 }.map(\.element)
                lines.append(JSONLine.observed(String(format: "obs-\(subject)-%03d", i), subject: subject, checked: checked, known: known,
                                               at: clock(i), recorded: clock(i)))
            }
        }
        try await withLedger { ledger async throws in
            let input = try lines.map { try decodeEvent($0) }
            let summary = try await ledger.append(input)
            #expect(summary.appended == 180)
            try Self.compareWithReferenceModel(ledger, input: input, name: "many versions and hashed keys")
            for subject in ["kid-ava", "kid-ben"] {
                let all = try ledger.read { try $0.knownHandles(subject: subject) }
                #expect(all.count > 3 && all.map(\.handle) == all.map(\.handle).sorted(), "ordered by handle: \(all.map(\.handle.value))")
            }
            // Verification rebuilds every row in memory and compares the bytes.
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// A seeded random history of several subjects: observations of a few handles out of each subject's pool
    /// (known or not), and questions about one or two of them answered later with a grant of one or two hours,
    /// a permanent one or a denial. Handles come back again and again, so the as-of points see each with
    /// anything from no version to dozens. Known handles and `isKnownHandle`, at every seq and between events,
    /// equal the reference model's.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func knownHandlesOfARandomHistoryEqualTheReferenceModel(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let long = String(repeating: "q", count: 220)
        let pool: [(String, String)] = [
            ("h1", "custom"), ("h2", "custom"), ("h10", "custom"), ("ü-chat", "custom"), (long + "1", "custom"), (long + "2", "custom"),
            ("a@example.com", "emailAddress"), ("z@example.com", "emailAddress"), (String(repeating: "m", count: 205) + "@example.com", "emailAddress"),
            ("+15550100001", "phoneNumber"), ("+15550100002", "phoneNumber"), ("+15550100003", "phoneNumber"),
        ]
        let subjects = ["kid-a", "kid-b", "kid-c"]
        var lines: [String] = []
        var pending: [(question: String, subject: String)] = []
        var seconds = 8 * 3600
        for n in 0..<240 {
            seconds += Int.random(in: 20...150, using: &random)
            let clock = String(format: "%02d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
            let subject = subjects.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let checked = Array(pool.shuffled(using: &random).prefix(Int.random(in: 1...4, using: &random)))
                let known = checked.filter { _ in Bool.random(using: &random) }
                lines.append(JSONLine.observed("obs-\(n)", subject: subject, checked: checked, known: known, at: clock, recorded: clock))
            case 5..<8:
                let question = String(format: "6A3F1C2E-AB00-4000-8000-%012X", n)
                let people = Array(pool.shuffled(using: &random).prefix(Int.random(in: 1...2, using: &random)))
                lines.append(JSONLine.asked("ask-\(n)", question: question, subject: subject, at: clock, recorded: clock,
                                            people: people, choices: JSONLine.timeLimitedChoices))
                pending.append((question, subject))
            default:
                guard !pending.isEmpty else { continue }
                let (question, asker) = pending.remove(at: Int.random(in: 0..<pending.count, using: &random))
                let choice = ["approve-1h", "approve-2h", "approve", "decline"].randomElement(using: &random)!
                lines.append(JSONLine.answered("answer-\(n)", question: question, choice: choice, subject: asker, at: clock, recorded: clock))
            }
        }
        try await withLedger { ledger async throws in
            let input = try lines.map { try decodeEvent($0) }
            let summary = try await ledger.append(input)
            #expect(summary.appended == input.count)
            try Self.compareWithReferenceModel(ledger, input: input, name: "random history \(seed)")
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// The readable diff used on failure names the entities that differ, and nothing when the states are equal.
    @Test func canonicalDiffNamesTheDifferingEntities() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("time-limited.jsonl")
            let six = try ledger.read(asOf: .seq(6)) { try $0.canonicalState() }
            let seven = try ledger.read(asOf: .seq(7)) { try $0.canonicalState() }
            #expect(canonicalDiff(expected: six, actual: six) == "")
            let diff = canonicalDiff(expected: six, actual: seven).split(separator: "\n")
            // pixelpal lapsed and a permission appeared: a removed handle line and a changed permissions tail.
            #expect(diff.contains { $0.hasPrefix("- ") && $0.contains(#""value":"pixelpal""#) })
            #expect(diff.contains { $0.hasPrefix("+ ") && $0.contains(#""permission":"notifications""#) })
            #expect(!diff.contains { $0.contains("6A3F1C2E-0009-4000-8000-000000000003") }, "unchanged questions are not listed")
        }
    }

    /// The model itself reproduces what fixture headers state, so that it is not vacuously agreeing.
    @Test func referenceModelMatchesFixtureHeaders() throws {
        // time-limited.jsonl: as of seq:6 both handles are known; at the head pixelpal has lapsed.
        var model = ReferenceModel()
        let events = try Fixtures.fixture("time-limited.jsonl").events
        for event in events.prefix(6) { _ = model.apply(event) }
        let atSix = model.answers(at: try time("2026-11-20T10:10:02Z"))
        // Ordered by kind, then value: custom < emailAddress.
        #expect(atSix.handles["kid-ben"]?.map(\.handle.value) == ["pixelpal", "aunt.jo@example.net"])
        #expect(atSix.handles["kid-ben"]?.first?.source == .question(QID.uuid("6A3F1C2E-0009-4000-8000-000000000001")))
        #expect(atSix.handles["kid-ben"]?.first?.until == (try time("2026-11-20T11:00:00Z")))
        #expect(atSix.handles["kid-ben"]?.last?.source == .question(QID.uuid("6A3F1C2E-0009-4000-8000-000000000002")))
        #expect(atSix.handles["kid-ben"]?.last?.until == nil)
        for event in events.dropFirst(6) { _ = model.apply(event) }
        let final = model.answers(at: try #require(model.lastRecordedAt))
        #expect(final.handles["kid-ben"] == [KnownGrant(
            handle: try CommunicationHandle(value: "aunt.jo@example.net", kind: .emailAddress),
            since: try time("2026-11-20T10:05:00Z"), until: nil, source: .question(QID.uuid("6A3F1C2E-0009-4000-8000-000000000002")))])

        // expiry-by-clock.jsonl: Q1 and Q3 expired by the clock (Q3 exactly at the head's clock), Q2 pending.
        var clockModel = ReferenceModel()
        for event in try Fixtures.fixture("expiry-by-clock.jsonl").events { _ = clockModel.apply(event) }
        let states = clockModel.answers(at: try #require(clockModel.lastRecordedAt)).questions
        #expect(states.map(\.state) == [.expired, .pending, .expired])
        #expect(states.map(\.resolvedAt) == [try time("2026-11-20T16:30:00Z"), nil, try time("2026-11-20T16:45:01Z")])

        // duplicate-response.jsonl: 6 event lines, 3 appended.
        var dupModel = ReferenceModel()
        let appended = try Fixtures.fixture("duplicate-response.jsonl").events.filter { dupModel.apply($0) }
        #expect(appended.map(\.id) == ["dup-01", "dup-02", "dup-04"])

        // late-answer.jsonl: two late answers (one after an expired event, one recorded after expiresAt).
        var lateModel = ReferenceModel()
        for event in try Fixtures.fixture("late-answer.jsonl").events { _ = lateModel.apply(event) }
        let late = lateModel.answers(at: try #require(lateModel.lastRecordedAt)).questions
        #expect(late.filter(\.late).count == 2)
        #expect(late.filter { $0.state == .expired }.count == 1)
    }
}

// MARK: - Answers in comparable form

/// A question's state as a plain value.
struct QuestionAnswer: Hashable, CustomStringConvertible {
    var id: UUID
    var subject: String
    var state: QuestionState
    var late: Bool
    var askedAt: Timestamp
    var resolvedAt: Timestamp?
    var choiceID: String?
    var via: AnswerVia?
    var errorCode: AskError.Code?

    var description: String {
        "\(id.uuidString) \(subject) \(state.rawValue)\(late ? " late" : "") asked \(askedAt) resolved \(resolvedAt?.description ?? "nil")"
            + " choice \(choiceID ?? "nil") via \(via?.rawValue ?? "nil") error \(errorCode?.rawValue ?? "nil")"
    }
}

/// A permission's state as a plain value.
struct PermissionAnswer: Hashable, CustomStringConvertible {
    var permission: SystemPermission
    var state: SystemPermission.State
    var since: Timestamp
    var cause: SystemPermission.Cause?

    var description: String { "\(permission.rawValue) \(state.rawValue) since \(since) cause \(cause?.rawValue ?? "nil")" }
}

extension KnownGrant: CustomStringConvertible {
    var description: String {
        let source: String = switch self.source {
        case .question(let id): "question \(id.uuidString)"
        case .observation(let seq): "observation \(seq)"
        }
        return "\(handle.kind.rawValue) \(handle.value) since \(since) until \(until?.description ?? "nil") source \(source)"
    }
}

/// Every answer the issue names, at one point: questions (in listing order), subjects, and each subject's
/// known handles and permissions.
struct StateAnswers: Equatable {
    var questions: [QuestionAnswer] = []
    var subjects: [String] = []
    var handles: [String: [KnownGrant]] = [:]
    var permissions: [String: [PermissionAnswer]] = [:]

    init() {}

    /// What the ledger's indexed queries answer.
    init(_ view: LedgerView) throws {
        questions = try view.questions().map {
            QuestionAnswer(id: $0.question.id, subject: $0.subject, state: $0.state, late: $0.late, askedAt: $0.askedAt,
                           resolvedAt: $0.resolvedAt, choiceID: $0.choice?.id, via: $0.via, errorCode: $0.error?.code)
        }
        subjects = try view.subjects()
        for subject in subjects {
            handles[subject] = try view.knownHandles(subject: subject).map(KnownGrant.init)
            permissions[subject] = try view.permissions(subject: subject).map {
                PermissionAnswer(permission: $0.permission, state: $0.state, since: $0.since, cause: $0.cause)
            }
        }
    }

    /// Readable differences, `expected` being `self`.
    func differences(from actual: StateAnswers) -> [String] {
        var out: [String] = []
        if questions != actual.questions {
            let expectedByID = Dictionary(questions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let actualByID = Dictionary(actual.questions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for q in questions where actualByID[q.id] != q {
                out.append("question expected: \(q)\n    ledger:   \(actualByID[q.id].map(\.description) ?? "(missing)")")
            }
            for q in actual.questions where expectedByID[q.id] == nil {
                out.append("question not expected: \(q)")
            }
            if out.isEmpty { out.append("questions in a different order: expected \(questions.map(\.id.uuidString)), ledger \(actual.questions.map(\.id.uuidString))") }
        }
        if subjects != actual.subjects { out.append("subjects expected \(subjects), ledger \(actual.subjects)") }
        for subject in Set(subjects).union(actual.subjects).sorted() {
            let (e, a) = (handles[subject] ?? [], actual.handles[subject] ?? [])
            if e != a { out.append("\(subject) known handles expected \(e)\n    ledger \(a)") }
            let (ep, ap) = (permissions[subject] ?? [], actual.permissions[subject] ?? [])
            if ep != ap { out.append("\(subject) permissions expected \(ep)\n    ledger \(ap)") }
        }
        return out
    }
}

// MARK: - The reference model

/// docs/spec/EVENTS.md's "State" section, implemented directly and naively over decoded events, in `seq` order.
/// It shares nothing with the library's projector or storage: it is the oracle the indexed answers are checked against.
struct ReferenceModel {
    struct Question {
        var question: PermissionQuestion
        var subject: String
        var askedAt: Timestamp
        /// The seq of its `question.asked`.
        var askedSeq: UInt64
        /// The subject's generation when it was asked: its handles are matched in that one.
        var generation = 0
        /// The state the events gave (the clock is applied at evaluation).
        var state: QuestionState = .pending
        var expiredByEvent = false
        var late = false
        var resolvedAt: Timestamp?
        var choiceID: String?
        var via: AnswerVia?
        var errorCode: AskError.Code?
    }

    /// What is recorded for one handle of one subject.
    struct Record {
        var known: Bool
        var since: Timestamp
        var until: Timestamp?
        var source: HandleSource
    }

    /// The last `seq` appended.
    private(set) var seq: UInt64 = 0
    private(set) var lastRecordedAt: Timestamp?
    private var ids: Set<String> = []
    private var questions: [UUID: Question] = [:]
    /// Question ids in listing order.
    private var questionOrder: [(askedAt: Timestamp, id: String, uuid: UUID)] = []
    private var subjects: Set<String> = []
    /// A handle as the rules match it: by value, within one generation of the subject. A whole erasure starts a
    /// new one ("later events of the same subject are new data", docs/spec/PRIVACY.md): what comes after it
    /// matches nothing recorded before it, except through a question asked before it.
    struct HandleKey: Hashable {
        var handle: CommunicationHandle
        var generation: Int
    }
    private var records: [String: [HandleKey: Record]] = [:]
    private var generations: [String: Int] = [:]
    private var permissionStates: [String: [SystemPermission: PermissionAnswer]] = [:]
    /// Every (subject, handle) that ever had a record, in first-seen order.
    private(set) var everSeenHandles: [(subject: String, handle: CommunicationHandle)] = []
    /// The seqs of the events whose personal fields an erasure in the log erases. "An erased handle can no longer
    /// be matched ... and the set lists it as an erased entry" (docs/spec/PRIVACY.md): a record written by such an
    /// event is listed erased, and its value is not known.
    var erasedSeqs: Set<UInt64> = []

    /// Whether the event that wrote `record` is erased.
    private func isErased(_ record: Record) -> Bool {
        switch record.source {
        case .observation(let seq): erasedSeqs.contains(seq)
        case .question(let id): questions[id].map { erasedSeqs.contains($0.askedSeq) } ?? false
        }
    }

    /// Applies one event; returns false for a duplicate (nothing appended).
    mutating func apply(_ event: PermissionEvent) -> Bool {
        // "an event whose id is already in the ledger is a duplicate" (fixtures are valid: same content).
        guard !ids.contains(event.id) else { return false }
        let recordedAt = event.recordedAt!
        switch event.payload {
        case .questionAsked(let question):
            questions[question.id] = Question(
                question: question, subject: event.subject, askedAt: event.occurredAt, askedSeq: seq + 1,
                generation: generations[event.subject] ?? 0)
            // Listing order: askedAt, then the id as written (uppercase hex).
            let key = (event.occurredAt, question.id.uuidString)
            let at = questionOrder.firstIndex { ($0.askedAt, $0.id) > key } ?? questionOrder.endIndex
            questionOrder.insert((key.0, key.1, question.id), at: at)
        case .questionSendCanceled(let id):
            questions[id]!.state = .canceled
            questions[id]!.resolvedAt = event.occurredAt
        case .questionAskFailed(let id, let error):
            questions[id]!.state = .failed
            questions[id]!.errorCode = error.code
            questions[id]!.resolvedAt = event.occurredAt
        case .questionExpired(let id):
            questions[id]!.state = .expired
            questions[id]!.expiredByEvent = true
            questions[id]!.resolvedAt = event.occurredAt
        case .questionAnswered(let id, let choiceID, let via):
            var q = questions[id]!
            // "A second answer with the same choiceId is the same response delivered twice: a no-op."
            if q.state == .approved || q.state == .denied {
                if q.choiceID != choiceID { Issue.record("a valid fixture never answers twice differently: \(event.id)") }
                return false
            }
            let choice = q.question.choices.first { $0.id == choiceID }!
            q.state = choice.answer == .approval ? .approved : .denied
            // "late when it was recorded after a question.expired event, or with a recordedAt at or after expiresAt".
            q.late = q.expiredByEvent || (q.question.expiresAt.map { recordedAt >= $0 } ?? false)
            q.choiceID = choiceID
            q.via = via
            q.resolvedAt = event.occurredAt
            questions[id] = q
            if choice.answer == .approval, case .communication(let topic) = q.question.topic {
                let until = choice.grantSeconds.map { Timestamp(microseconds: event.occurredAt.microseconds + $0 * 1_000_000) }
                for person in topic.personInformation {
                    approve(person.handle, subject: event.subject, since: event.occurredAt, until: until, question: id)
                }
            }
        case .handlesObserved(let checked, let known):
            for handle in checked {
                // The system is the authority: replaces whatever came before for that handle.
                set(HandleKey(handle: handle, generation: generations[event.subject] ?? 0), subject: event.subject, Record(
                    known: known.contains(handle), since: event.occurredAt, until: nil, source: .observation(seq + 1)))
            }
        case .permissionChanged(let permission, let state, let cause):
            permissionStates[event.subject, default: [:]][permission] =
                PermissionAnswer(permission: permission, state: state, since: event.occurredAt, cause: cause)
        case .subjectErased(let erasure):
            // No state changes (docs/spec/EVENTS.md): what it erases is in `erasedSeqs`. A whole erasure (no cut,
            // or a cut after it) starts a new generation.
            if erasure.before.map({ $0 > recordedAt }) ?? true { generations[event.subject, default: 0] += 1 }
        }
        ids.insert(event.id)
        subjects.insert(event.subject)
        seq += 1
        lastRecordedAt = recordedAt
        return true
    }

    /// "Each approval replaces what came before for that handle, except that a time-limited approval never
    /// shortens a current one that lasts longer."
    private mutating func approve(_ handle: CommunicationHandle, subject: String, since: Timestamp, until: Timestamp?, question: UUID) {
        let handle = HandleKey(handle: handle, generation: questions[question]!.generation)
        if let until, let current = records[subject]?[handle], current.known {
            // Current: still in force when the new approval takes effect.
            let isCurrent = current.until.map { $0 > since } ?? true
            let lastsLonger = current.until.map { $0 > until } ?? true
            if isCurrent && lastsLonger { return }
        }
        set(handle, subject: subject, Record(known: true, since: since, until: until, source: .question(question)))
    }

    private mutating func set(_ handle: HandleKey, subject: String, _ record: Record) {
        if records[subject]?[handle] == nil { everSeenHandles.append((subject, handle.handle)) }
        records[subject, default: [:]][handle] = record
    }

    func isKnown(_ handle: CommunicationHandle, subject: String, at clock: Timestamp) -> Bool {
        let key = HandleKey(handle: handle, generation: generations[subject] ?? 0)
        guard let r = records[subject]?[key], r.known, !isErased(r) else { return false }
        return r.until.map { $0 > clock } ?? true
    }

    /// The state at evaluation clock `clock`.
    func answers(at clock: Timestamp) -> StateAnswers {
        var out = StateAnswers()
        out.questions = questionOrder.map { questions[$0.uuid]! }.map { q in
            var answer = QuestionAnswer(id: q.question.id, subject: q.subject, state: q.state, late: q.late, askedAt: q.askedAt,
                                        resolvedAt: q.resolvedAt, choiceID: q.choiceID, via: q.via, errorCode: q.errorCode)
            // "a pending question whose expiresAt is at or before the evaluation clock" is expired, resolved at expiresAt.
            if q.state == .pending, let expiresAt = q.question.expiresAt, expiresAt <= clock {
                answer.state = .expired
                answer.resolvedAt = expiresAt
            }
            return answer
        }
        out.subjects = subjects.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for subject in out.subjects {
            out.handles[subject] = (records[subject] ?? [:])
                .filter { $0.value.known && ($0.value.until.map { $0 > clock } ?? true) }
                .map { KnownGrant(handle: isErased($0.value) ? KnownGrant.erased($0.key.handle.kind) : $0.key.handle,
                                  since: $0.value.since, until: $0.value.until, source: $0.value.source) }
                .sorted { ($0.handle, $0.since, $0.description) < ($1.handle, $1.since, $1.description) }
            out.permissions[subject] = (permissionStates[subject] ?? [:]).values.sorted { $0.permission.rawValue < $1.permission.rawValue }
        }
        return out
    }
}

// MARK: - Readable diff of canonical states

/// The canonical state broken into one line per question, subject, handle and permission, and the lines
/// that differ (`-` expected, `+` actual).
func canonicalDiff(expected: String, actual: String, limit: Int = 12) -> String {
    func lines(_ s: String) -> [String] {
        var text = s
        for marker in [#"{"id":""#, #"{"subject":""#, #"{"value":""#, #"{"permission":""#] {
            text = text.replacingOccurrences(of: marker, with: "\n" + marker)
        }
        return text.split(separator: "\n").map(String.init)
    }
    let (e, a) = (lines(expected), lines(actual))
    var out: [String] = []
    for change in a.difference(from: e) {
        switch change {
        case .remove(let offset, let line, _): out.append("- [\(offset)] \(line)")
        case .insert(let offset, let line, _): out.append("+ [\(offset)] \(line)")
        }
    }
    out.sort { $0.dropFirst(3) < $1.dropFirst(3) }
    return (out.prefix(limit) + (out.count > limit ? ["… \(out.count - limit) more"] : [])).joined(separator: "\n")
}
