import Foundation
import PermissionLedger
import PermissionModel

/// A throwaway ledger holding a fixture's events, in a fresh temporary directory of its own.
///
/// The directory is removed by ``removeDirectory()``, at the end of the scoped APIs
/// (``Fixture/replay(clock:isolation:_:)``, ``Scenario/replay(clock:isolation:_:)``), or when the
/// object is deinitialized, whichever comes first. The ledger is not durable (no fsync): it exists for a test.
///
/// ```swift
/// try Fixture(path: "Fixtures/time-limited.jsonl").replay { replayed in
///     replayed.expectKnownHandles(subject: "kid-ben", [("aunt.jo@example.net", .emailAddress)])
///     replayed.expectKnownHandles(subject: "kid-ben", [("pixelpal", .custom), ("aunt.jo@example.net", .emailAddress)],
///                                 asOf: .seq(6))
///     print(try replayed.digest())
/// }
/// ```
///
/// Each scoped API has a synchronous and an `async` form; a closure that awaits picks the `async` one.
/// Swift infers whether a closure throws before it expands macros, so a closure whose only `try` is
/// inside `#expect(try …)` must say so: `{ replayed throws in … }`.
public final class ReplayedLedger: Sendable {
    /// The ledger itself, for any query the helpers do not cover.
    public let ledger: Ledger
    /// The temporary directory the ledger lives in (the ledger is its `ledger` subdirectory).
    public let directory: URL
    /// The fixture that was replayed.
    public let fixture: Fixture
    /// What the append did: one outcome per event (duplicates included) and the head afterwards.
    public let summary: Ledger.AppendSummary
    /// What expectation messages name: the fixture, and the line of each appended event.
    let context: FixtureContext

    /// Replays `fixture` into a new ledger in a new temporary directory, in one append.
    ///
    /// The ledger draws its keys and the salts of its commitments from a fixed seed, not from the system's
    /// random generator: two replays of the same events store the same bytes, with the same hashes. That makes
    /// its secrets guessable: a replayed ledger is for tests only.
    ///
    /// - Parameters:
    ///   - fixture: the events to replay.
    ///   - clock: the ledger's clock, which assigns `recordedAt` to events that have none and is the
    ///     clock of `.now` queries. Give a fixed one to make such fixtures deterministic.
    /// - Throws: ``FixtureError`` naming the line of every event the ledger rejected (nothing is kept: the
    ///   directory is removed); ``/PermissionLedger/LedgerError`` when the ledger cannot be created.
    public init(_ fixture: Fixture, clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("PermissionLedgerTesting-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            // Its keys, salts and nonces come from a fixed seed, so that a replay stores the same bytes and hashes
            // every time: a replayed ledger is for tests, never for real data.
            let options = Ledger.Options(mapSize: 1 << 20, durable: false, clock: clock).seededForTests()
            let ledger = try Ledger(path: directory.appendingPathComponent("ledger").path, options: options)
            do {
                summary = try ledger.appendSynchronously(fixture.events, maxRejections: .max)
            } catch let rejected as AppendRejected {
                throw FixtureError(name: fixture.name, problems: rejected.rejections.map { index, rejection in
                    FixtureError.Problem(line: fixture.lines.indices.contains(index) ? fixture.lines[index] : index + 1,
                                         reason: rejection.description)
                })
            }
            self.ledger = ledger
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.directory = directory
        self.fixture = fixture
        var lineOfSeq: [UInt64: Int] = [:]
        for (index, outcome) in summary.outcomes.enumerated() {
            if case .appended(let seq) = outcome, fixture.lines.indices.contains(index) { lineOfSeq[seq] = fixture.lines[index] }
        }
        context = FixtureContext(name: fixture.name, lineOfSeq: lineOfSeq)
    }

    /// Replays events into a new ledger in a new temporary directory; see ``init(_:clock:)``.
    public convenience init(events: [PermissionEvent], clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }) throws {
        try self.init(Fixture(events: events), clock: clock)
    }

    deinit {
        removeDirectory()
    }

    /// Removes the temporary directory and the ledger in it. The ledger must not be used afterwards.
    /// Calling it again does nothing.
    public func removeDirectory() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The log's head: the last event's `seq`, chain hash and `recordedAt`.
    public var head: LogHead {
        get throws { try ledger.head() }
    }

    /// The digest of all derived state; without a point, as of the head (see ``/PermissionLedger/Ledger/digest(asOf:)``).
    public func digest(asOf: AsOf? = nil) throws -> String {
        try ledger.digest(asOf: asOf)
    }

    /// Every event as `export` writes it: JSON Lines with `seq`, `recordedAt` and `hash`, each line ending in `\n`.
    public func exportText() throws -> String {
        var text = ""
        try ledger.export { text += $0 }
        return text
    }

    /// The stored events in `seq` order, with `seq`, `recordedAt` and `hash`.
    public func storedEvents() throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try ledger.forEachEvent { events.append($0) }
        return events
    }
}

// MARK: Scoped replay

/// Replays a fixture into a throwaway ledger, runs `body` with it, and removes the ledger's temporary
/// directory afterwards, also when `body` throws: what `Fixture.replay` and `Scenario.replay` run.
func withReplayedLedger<T>(
    _ fixture: Fixture,
    clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (ReplayedLedger) async throws -> T
) async throws -> T {
    let replayed = try ReplayedLedger(fixture, clock: clock)
    defer { replayed.removeDirectory() }
    return try await body(replayed)
}

/// The synchronous form of `withReplayedLedger(_:clock:isolation:_:)`.
func withReplayedLedger<T>(
    _ fixture: Fixture,
    clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
    _ body: (ReplayedLedger) throws -> T
) throws -> T {
    let replayed = try ReplayedLedger(fixture, clock: clock)
    defer { replayed.removeDirectory() }
    return try body(replayed)
}

extension Fixture {
    /// Replays the fixture into a throwaway ledger, runs `body` with it, and removes the ledger afterwards.
    ///
    /// ```swift
    /// try Fixture(path: "Fixtures/permissions.jsonl").replay { replayed in
    ///     replayed.expectPermission(.camera, .askAgain, subject: "kid-ava", asOf: .seq(2))
    /// }
    ///
    /// let digest = try await fixture.replay { replayed async throws in
    ///     try await replayed.ledger.append(moreEvents)
    ///     replayed.expectQuestion(id, state: .denied)
    ///     return try replayed.digest()
    /// }
    /// ```
    ///
    /// - Throws: ``FixtureError`` naming the line of every rejected event; what `body` throws.
    public func replay<T>(
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ReplayedLedger) async throws -> T
    ) async throws -> T {
        try await withReplayedLedger(self, clock: clock, isolation: isolation, body)
    }

    /// The synchronous form of ``replay(clock:isolation:_:)``.
    public func replay<T>(
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
        _ body: (ReplayedLedger) throws -> T
    ) throws -> T {
        try withReplayedLedger(self, clock: clock, body)
    }
}
