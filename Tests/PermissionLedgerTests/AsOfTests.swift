import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct AsOfTests {
    /// Five permission changes of kid-ava, four of the camera; events 2, 3 and 4 share a recordedAt (09:10:01).
    static func events() throws -> [PermissionEvent] {
        var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T09:00:00Z"))
        s.permission(.camera, .notDetermined)
        s.advance(by: .seconds(600))
        s.permission(.camera, .askAgain)
        s.permission(.camera, .authorized)
        s.permission(.microphone, .denied)
        s.advance(by: .seconds(600))
        s.permission(.camera, .denied)
        return s.events
    }
    static let states: [SystemPermission.State?] = [nil, .notDetermined, .askAgain, .authorized, .authorized, .denied]

    static func cameraState(_ ledger: Ledger, _ asOf: AsOf) throws -> SystemPermission.State? {
        try ledger.read(asOf: asOf) { try $0.permissions(subject: "kid-ava") }.first { $0.permission == .camera }?.state
    }

    static func withScenario(_ body: (Ledger) async throws -> Void) async throws {
        try await withLedger { ledger async throws in
            _ = try await ledger.append(try events())
            try await body(ledger)
        }
    }

    @Test(arguments: 0...5)
    func seqGivesTheStateAfterThatEvent(n: Int) async throws {
        try await Self.withScenario { ledger async throws in
            #expect(try Self.cameraState(ledger, .seq(UInt64(n))) == Self.states[n])
            let point = try ledger.read(asOf: .seq(UInt64(n))) { $0.point }
            #expect(point.seq == UInt64(n))
            if n > 0 {
                #expect(point.time == (try Self.events()[n - 1].recordedAt), "the clock is event N's recordedAt")
            }
            #expect(try ledger.read(asOf: .seq(UInt64(n))) { $0.head.seq } == 5, "the head does not depend on the point")
        }
    }

    @Test(arguments: [
        ("2026-11-20T08:00:00Z", UInt64(0)),
        ("2026-11-20T09:00:00.999999Z", 0),
        ("2026-11-20T09:00:01Z", 1),
        ("2026-11-20T09:05:00Z", 1),
        ("2026-11-20T09:10:01Z", 4),   // every event recorded at that instant
        ("2026-11-20T10:10:01+01:00", 4),
        ("2026-11-20T09:20:00.999999Z", 4),
        ("2026-11-20T09:20:01Z", 5),
        ("2027-01-01T00:00:00Z", 5),
    ])
    func timeGivesTheEventsRecordedAtOrBeforeIt(text: String, seq: UInt64) async throws {
        try await Self.withScenario { ledger async throws in
            let t = try time(text)
            let point = try ledger.read(asOf: .time(t)) { $0.point }
            #expect(point.seq == seq)
            #expect(point.time == t, "the clock is T")
            #expect(try Self.cameraState(ledger, .time(t)) == Self.states[Int(seq)])
        }
    }

    @Test func extremeTimesAreAnswered() async throws {
        try await Self.withScenario { ledger async throws in
            #expect(try ledger.read(asOf: .time(Timestamp(microseconds: .max))) { $0.point.seq } == 5)
            #expect(try ledger.read(asOf: .time(Timestamp(microseconds: .min))) { $0.point.seq } == 0)
        }
    }

    @Test(arguments: [UInt64(6), 7, 1_000, .max])
    func seqBeyondTheHeadIsNotFound(n: UInt64) async throws {
        try await Self.withScenario { ledger async throws in
            let error = ledgerError { _ = try ledger.read(asOf: .seq(n)) { $0.point } }
            #expect(error?.kind == .notFound)
            #expect(ledgerError { _ = try ledger.digest(asOf: .seq(n)) }?.kind == .notFound)
        }
    }

    @Test func seqOnAnEmptyLedger() async throws {
        try await withLedger { ledger async throws in
            #expect(try ledger.read(asOf: .seq(0)) { try $0.subjects() }.isEmpty)
            #expect(ledgerError { _ = try ledger.read(asOf: .seq(1)) { $0.point } }?.kind == .notFound)
            #expect(try ledger.read(asOf: .time(try time("2026-11-20T09:00:00Z"))) { $0.point.seq } == 0)
        }
    }

    @Test func asOfParsesSeqAndTimes() throws {
        #expect(try AsOf(parsing: "seq:12") == .seq(12))
        #expect(try AsOf(parsing: "seq:0") == .seq(0))
        #expect(try AsOf(parsing: "2026-11-20T10:00:00+01:00") == .time(try time("2026-11-20T09:00:00Z")))
        for bad in ["seq:", "seq:-1", "seq:x", "seq:1.5", "yesterday", "2026-11-20T09:00:00", ""] {
            #expect(throws: PermissionModelError.self, "\(bad)") { try AsOf(parsing: bad) }
        }
        #expect(AsOf.seq(3).description == "seq:3")
        #expect(AsOf.time(try time("2026-11-20T09:00:00.5Z")).description == "2026-11-20T09:00:00.500000Z")
    }

    /// As of seq N, a ledger answers what a ledger holding only its first N events answers.
    @Test(arguments: Fixtures.valid)
    func asOfSeqEqualsALedgerThatStoppedThere(name: String) async throws {
        try await withLedger { full async throws in
            try await full.importFixture(name)
            var events: [PermissionEvent] = []
            events += try storedEvents(full).map(\.event)
            let count = events.count
            // An erasure changes what every earlier point shows (docs/spec/PRIVACY.md): a ledger that stopped
            // before it shows the values it erased. So points are taken from the last erasure on.
            let lastErasure = lastErasureSeq(events)
            let points = (count > 50 ? [0, 1, count / 4, count / 2, count - 1] : Array(0..<count)).filter { $0 >= lastErasure }
            try await withLedger { prefix async throws in
                var appended = 0
                for n in points {
                    _ = try await prefix.append(Array(events[appended..<n]))
                    appended = n
                    #expect(try await prefix.digest() == full.digest(asOf: .seq(UInt64(n))), "\(name) as of seq:\(n)")
                    #expect(try prefix.read { try $0.canonicalState() } != "" )
                    #expect(try prefix.read(asOf: .seq(UInt64(n))) { try $0.canonicalState() }
                        == full.read(asOf: .seq(UInt64(n))) { try $0.canonicalState() })
                }
            }
        }
    }
}
