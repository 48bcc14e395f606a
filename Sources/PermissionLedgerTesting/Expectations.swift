import Foundation
import PermissionLedger
import PermissionModel
import Testing

// Expectations about a ledger's state at a point of its log, for Swift Testing.
//
// Each one reads the ledger, compares, and on a difference records an issue at the caller's line whose
// message puts the expected and the actual values side by side and names the point of the log. None
// throws: a point that cannot be read (say, seq:N beyond the head) is recorded as an issue too.
// Without `asOf`, the point is the head (seq of the last event, whose recordedAt is the clock), not the
// wall clock, so that an expectation depends on the events alone, as a fixture's "final state" does.

extension Ledger {
    /// Expects a question to be in `state` at a point of the log, and optionally `late`, answered with
    /// `choice` and `via`.
    ///
    /// ```swift
    /// ledger.expectQuestion(id, state: .approved, late: true, asOf: .seq(5))
    /// ```
    ///
    /// On a difference, records an issue such as:
    ///
    /// ```
    /// Question 5CE4A210-0000-4000-8000-000000000001 of "kid-1" as of seq:5 (clock 2026-11-20T09:05:01Z):
    ///            expected  actual
    ///   ✗ state  approved  pending
    ///     late   true      true
    /// ```
    ///
    /// - Parameters:
    ///   - id: the question's id.
    ///   - state: the expected state; `.expired` also covers a question expired by the clock alone.
    ///   - late: checked when given.
    ///   - choice: the expected choice id, checked when given.
    ///   - via: the expected way the answer came, checked when given.
    ///   - asOf: the point of the log; `nil` for the head.
    ///   - sourceLocation: where an issue is recorded; the caller's line by default.
    /// - Returns: whether the expectation held.
    @discardableResult
    public func expectQuestion(
        _ id: UUID, state: QuestionState, late: Bool? = nil, choice: String? = nil, via: AnswerVia? = nil,
        asOf: AsOf? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let what = "Question \(id.uuidString)"
        guard let (point, actual) = reading(what, asOf: asOf, sourceLocation: sourceLocation, { try $0.question(id) })
        else { return false }
        var rows: [SideBySide.Row] = []
        let missing = "(not asked by then)"
        rows.append(.init(["state", state.rawValue, actual?.state.rawValue ?? missing]))
        if let late {
            rows.append(.init(["late", String(late), actual.map { String($0.late) } ?? missing]))
        }
        if let choice {
            rows.append(.init(["choice", choice, actual.map { $0.choice?.id ?? "(none)" } ?? missing]))
        }
        if let via {
            rows.append(.init(["via", via.rawValue, actual.map { $0.via?.rawValue ?? "(none)" } ?? missing]))
        }
        let subject = actual.map { " of \(quoted($0.subject))" } ?? ""
        return SideBySide(title: "\(what)\(subject) \(point)", header: ["", "expected", "actual"], rows: rows)
            .record(sourceLocation)
    }

    /// Expects exactly these handles to be known for `subject` at a point of the log: known, and not lapsed
    /// at the point's clock.
    ///
    /// ```swift
    /// let alex = try CommunicationHandle(value: "dragonslayer42", kind: .custom)
    /// ledger.expectKnownHandles(subject: "kid-1", [alex], asOf: .seq(2))
    /// ```
    ///
    /// On a difference, records an issue with one row per handle, expected on the left and actual on the
    /// right (with its `since`, `until` and source), and `✗` on the rows that differ.
    ///
    /// - Parameters:
    ///   - subject: whose handles.
    ///   - expected: the handles, in any order.
    ///   - asOf: the point of the log; `nil` for the head.
    ///   - sourceLocation: where an issue is recorded; the caller's line by default.
    /// - Returns: whether the expectation held.
    @discardableResult
    public func expectKnownHandles(
        subject: String, _ expected: [CommunicationHandle], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        expectKnownHandles(subject: subject, expected.map { .readable($0) }, asOf: asOf, sourceLocation: sourceLocation)
    }

    /// Expects exactly these handles to be known for `subject` at a point of the log, each readable or erased: an
    /// erased handle's value is gone, and it is expected as the erasure that made it unreadable, once for each
    /// erased handle.
    ///
    /// ```swift
    /// let erasure = ErasureMark(seq: 3, basis: .guardianRequest)
    /// ledger.expectKnownHandles(subject: "kid-1", [.erased(erasure), .readable(alex)])
    /// ```
    @discardableResult @_disfavoredOverload
    public func expectKnownHandles(
        subject: String, _ expected: [Erasable<CommunicationHandle>], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let what = "Known handles of \(quoted(subject))"
        guard let (point, actual) = reading(what, asOf: asOf, sourceLocation: sourceLocation, { try $0.knownHandles(subject: subject) })
        else { return false }
        // Compared as lists in one order, so that erased handles, alike but for their kind, each have a row.
        let expectedSorted = expected.sorted(by: erasableOrder)
        let actualSorted = actual.map { (erasable: $0.erasableHandle, known: $0) }.sorted { erasableOrder($0.erasable, $1.erasable) }
        var rows: [SideBySide.Row] = []
        var (e, a) = (0, 0)
        while e < expectedSorted.count || a < actualSorted.count {
            let left = e < expectedSorted.count ? expectedSorted[e] : nil
            let right = a < actualSorted.count ? actualSorted[a] : nil
            if let left, let right, left == right.erasable {
                rows.append(.init([describe(left), describe(right.known)], differs: false))
                (e, a) = (e + 1, a + 1)
            } else if let left, right == nil || erasableOrder(left, right!.erasable) {
                rows.append(.init([describe(left), "—"], differs: true))
                e += 1
            } else {
                rows.append(.init(["—", describe(right!.known)], differs: true))
                a += 1
            }
        }
        return SideBySide(
            title: "\(what) \(point); expected \(expected.count), actual \(actual.count)",
            header: ["expected", "actual"], rows: rows.isEmpty ? [.init(["(none)", "(none)"])] : rows
        ).record(sourceLocation)
    }

    /// Expects exactly these handles, given as value and kind, to be known for `subject` at a point of the log.
    ///
    /// ```swift
    /// ledger.expectKnownHandles(subject: "kid-1", [("dragonslayer42", .custom), ("+1 555 0100", .phoneNumber)])
    /// ```
    ///
    /// Values are normalized as the ledger does; a value that is not valid for its kind is recorded as an issue.
    @discardableResult @_disfavoredOverload
    public func expectKnownHandles(
        subject: String, _ expected: [(value: String, kind: CommunicationHandle.Kind)], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        var handles: [CommunicationHandle] = []
        for (value, kind) in expected {
            do {
                handles.append(try CommunicationHandle(value: value, kind: kind))
            } catch {
                Issue.record(Comment(rawValue: "Expected known handle \(quoted(value)) (\(kind.rawValue)) is not a valid handle: \(error)"),
                             sourceLocation: sourceLocation)
                return false
            }
        }
        return expectKnownHandles(subject: subject, handles, asOf: asOf, sourceLocation: sourceLocation)
    }

    /// Expects `subject`'s permission states at a point of the log to be exactly `expected`: every permission
    /// with a recorded state is listed, with that state.
    ///
    /// ```swift
    /// ledger.expectPermissions(subject: "kid-1", [.camera: .authorized, .microphone: .doNotAskAgain])
    /// ```
    ///
    /// On a difference, records an issue with a row per permission (`permission  expected  actual`), and `✗`
    /// on the rows that differ; `(none)` stands for a permission with no recorded state.
    ///
    /// - Returns: whether the expectation held.
    @discardableResult
    public func expectPermissions(
        subject: String, _ expected: [SystemPermission: SystemPermission.State], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let what = "Permissions of \(quoted(subject))"
        guard let (point, actual) = reading(what, asOf: asOf, sourceLocation: sourceLocation, { try $0.permissions(subject: subject) })
        else { return false }
        let actualStates = Dictionary(actual.map { ($0.permission, $0.state) }, uniquingKeysWith: { a, _ in a })
        let all = Set(expected.keys).union(actualStates.keys).sorted()
        let rows = all.map { permission in
            SideBySide.Row([
                permission.rawValue,
                expected[permission]?.rawValue ?? "(none)",
                actualStates[permission]?.rawValue ?? "(none)",
            ], differs: expected[permission] != actualStates[permission])
        }
        return SideBySide(title: "\(what) \(point)", header: ["permission", "expected", "actual"],
                          rows: rows.isEmpty ? [.init(["(none)", "(none)", "(none)"])] : rows)
            .record(sourceLocation)
    }

    /// Expects one permission of `subject` to be in `state` at a point of the log (`nil`: no recorded state),
    /// whatever the others are.
    ///
    /// ```swift
    /// ledger.expectPermission(.camera, .authorized, subject: "kid-1")
    /// ```
    ///
    /// - Returns: whether the expectation held.
    @discardableResult
    public func expectPermission(
        _ permission: SystemPermission, _ state: SystemPermission.State?, subject: String, asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let what = "Permission \(permission.rawValue) of \(quoted(subject))"
        guard let (point, actual) = reading(what, asOf: asOf, sourceLocation: sourceLocation, { try $0.permissions(subject: subject) })
        else { return false }
        let status = actual.first { $0.permission == permission }
        var rows = [SideBySide.Row(["state", state?.rawValue ?? "(none)", status?.state.rawValue ?? "(none)"])]
        if let status {
            rows.append(.init(["since", "", status.since.description], differs: false))
            rows.append(.init(["cause", "", status.cause?.rawValue ?? "(none)"], differs: false))
        }
        return SideBySide(title: "\(what) \(point)", header: ["", "expected", "actual"], rows: rows).record(sourceLocation)
    }

    /// Expects the digest of all derived state at a point of the log to be `expected`.
    ///
    /// ```swift
    /// ledger.expectDigest("3e5c…", asOf: .seq(7))
    /// ```
    ///
    /// On a difference, records an issue with an `expected:` line above an `actual:` line.
    ///
    /// - Returns: whether the expectation held.
    @discardableResult
    public func expectDigest(_ expected: String, asOf: AsOf? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let (point, actual) = reading("Digest", asOf: asOf, sourceLocation: sourceLocation, { try $0.digest() })
        else { return false }
        guard actual != expected else { return true }
        recordExpectationIssue("Digest \(point) differs:\n  expected: \(expected)\n  actual:   \(actual)", sourceLocation)
        return false
    }

    /// Reads `body` at the point, recording an issue (and returning `nil`) when the point cannot be read.
    private func reading<T>(
        _ what: String, asOf: AsOf?, sourceLocation: SourceLocation, _ body: (LedgerView) throws -> T
    ) -> (point: PointDescription, value: T)? {
        do {
            let point = try asOf ?? .seq(head().seq)
            return try read(asOf: point) { view in
                (PointDescription(asOf: point, isHead: asOf == nil, point: view.point), try body(view))
            }
        } catch {
            recordExpectationIssue("\(what) as of \(asOf?.description ?? "the head"): cannot be read: \(error)", sourceLocation)
            return nil
        }
    }
}

extension ReplayedLedger {
    /// Runs an expectation of the ledger with this fixture named in its messages.
    private func namingTheFixture(_ expectation: () -> Bool) -> Bool {
        FixtureContext.$current.withValue(context, operation: expectation)
    }

    /// Expects a question's state at a point of the log; see ``PermissionLedger/Ledger/expectQuestion(_:state:late:choice:via:asOf:sourceLocation:)``.
    @discardableResult
    public func expectQuestion(
        _ id: UUID, state: QuestionState, late: Bool? = nil, choice: String? = nil, via: AnswerVia? = nil,
        asOf: AsOf? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        namingTheFixture {
            ledger.expectQuestion(id, state: state, late: late, choice: choice, via: via, asOf: asOf, sourceLocation: sourceLocation)
        }
    }

    /// Expects exactly these known handles; see `Ledger.expectKnownHandles(subject:_:asOf:sourceLocation:)`.
    @discardableResult
    public func expectKnownHandles(
        subject: String, _ expected: [CommunicationHandle], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        namingTheFixture { ledger.expectKnownHandles(subject: subject, expected, asOf: asOf, sourceLocation: sourceLocation) }
    }

    /// Expects exactly these known handles, given as value and kind.
    @discardableResult @_disfavoredOverload
    public func expectKnownHandles(
        subject: String, _ expected: [(value: String, kind: CommunicationHandle.Kind)], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        namingTheFixture { ledger.expectKnownHandles(subject: subject, expected, asOf: asOf, sourceLocation: sourceLocation) }
    }

    /// Expects exactly these known handles, each readable or erased; see
    /// `Ledger.expectKnownHandles(subject:_:asOf:sourceLocation:)`.
    @discardableResult @_disfavoredOverload
    public func expectKnownHandles(
        subject: String, _ expected: [Erasable<CommunicationHandle>], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        namingTheFixture { ledger.expectKnownHandles(subject: subject, expected, asOf: asOf, sourceLocation: sourceLocation) }
    }

    /// Expects exactly these permission states; see ``PermissionLedger/Ledger/expectPermissions(subject:_:asOf:sourceLocation:)``.
    @discardableResult
    public func expectPermissions(
        subject: String, _ expected: [SystemPermission: SystemPermission.State], asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        namingTheFixture { ledger.expectPermissions(subject: subject, expected, asOf: asOf, sourceLocation: sourceLocation) }
    }

    /// Expects one permission's state; see ``PermissionLedger/Ledger/expectPermission(_:_:subject:asOf:sourceLocation:)``.
    @discardableResult
    public func expectPermission(
        _ permission: SystemPermission, _ state: SystemPermission.State?, subject: String, asOf: AsOf? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        namingTheFixture { ledger.expectPermission(permission, state, subject: subject, asOf: asOf, sourceLocation: sourceLocation) }
    }

    /// Expects the digest at a point of the log; see ``PermissionLedger/Ledger/expectDigest(_:asOf:sourceLocation:)``.
    @discardableResult
    public func expectDigest(_ expected: String, asOf: AsOf? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        namingTheFixture { ledger.expectDigest(expected, asOf: asOf, sourceLocation: sourceLocation) }
    }
}

// MARK: Messages

/// The point an expectation was checked at, as messages name it.
struct PointDescription: CustomStringConvertible {
    var asOf: AsOf
    var isHead: Bool
    var point: AsOfPoint

    var description: String {
        let text = switch asOf {
        case .seq(let n) where isHead: "as of seq:\(n), the head (clock \(point.time))"
        case .seq(let n): "as of seq:\(n) (clock \(point.time))"
        case .time(let t): "as of \(t) (events through seq:\(point.seq))"
        case .now: "as of now (events through seq:\(point.seq), clock \(point.time))"
        }
        guard let line = FixtureContext.current?.lineOfSeq[point.seq] else { return text }
        return text + "; seq \(point.seq) is line \(line)"
    }
}

/// The fixture a ``ReplayedLedger``'s expectations check, so that their messages name it and the line of the
/// point's last event: one helper that replays every fixture still says which one failed, and where.
struct FixtureContext: Sendable {
    var name: String
    /// The line each appended event came from, by its seq.
    var lineOfSeq: [UInt64: Int]

    @TaskLocal static var current: FixtureContext?
}

/// Records an expectation's failure at the caller's line, naming the fixture when there is one.
func recordExpectationIssue(_ text: String, _ sourceLocation: SourceLocation) {
    let fixture = FixtureContext.current.map { "\($0.name): " } ?? ""
    Issue.record(Comment(rawValue: fixture + text), sourceLocation: sourceLocation)
}

/// A table of expected and actual values, with `✗` on the rows that differ.
struct SideBySide {
    struct Row {
        var cells: [String]
        var differs: Bool

        /// A row that differs when its last two cells (expected, actual) do.
        init(_ cells: [String]) {
            self.cells = cells
            differs = cells[cells.count - 2] != cells[cells.count - 1]
        }

        init(_ cells: [String], differs: Bool) {
            self.cells = cells
            self.differs = differs
        }
    }

    var title: String
    var header: [String]
    var rows: [Row]

    var differs: Bool { rows.contains { $0.differs } }

    var text: String {
        let table = [header] + rows.map(\.cells)
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        func line(_ marker: String, _ cells: [String]) -> String {
            var text = "  " + marker + " "
            for (column, cell) in cells.enumerated() {
                text += cell
                if column < cells.count - 1 { text += String(repeating: " ", count: widths[column] + 2 - cell.count) }
            }
            while text.last == " " { text.removeLast() }
            return text
        }
        return ([title + ":", line(" ", header)] + rows.map { line($0.differs ? "✗" : " ", $0.cells) }).joined(separator: "\n")
    }

    /// Records an issue at `sourceLocation` when a row differs; returns whether none did.
    func record(_ sourceLocation: SourceLocation) -> Bool {
        guard differs else { return true }
        recordExpectationIssue(text, sourceLocation)
        return false
    }
}

private func describe(_ handle: CommunicationHandle) -> String {
    "\(handle.kind.rawValue) \(quoted(handle.value))"
}

private func describe(_ handle: Erasable<CommunicationHandle>) -> String {
    switch handle {
    case .readable(let handle): describe(handle)
    case .erased(let mark): describe(mark)
    }
}

/// As the tool shows an erased value: `(erased, seq N)`.
private func describe(_ mark: ErasureMark) -> String { "(erased, seq \(mark.seq))" }

/// Readable handles first, in the handles' order, then erased ones by their erasure.
private func erasableOrder(_ a: Erasable<CommunicationHandle>, _ b: Erasable<CommunicationHandle>) -> Bool {
    switch (a, b) {
    case (.readable(let a), .readable(let b)): a < b
    case (.readable, .erased): true
    case (.erased, .readable): false
    case (.erased(let a), .erased(let b)): (a.seq, a.basis.rawValue) < (b.seq, b.basis.rawValue)
    }
}

extension KnownHandle {
    /// The handle, or the erasure that made its value unreadable.
    fileprivate var erasableHandle: Erasable<CommunicationHandle> { erased.map { .erased($0) } ?? .readable(handle) }
}

private func describe(_ known: KnownHandle) -> String {
    var text = known.erased.map { "\(known.handle.kind.rawValue) \(describe($0))" } ?? describe(known.handle)
    text += "  since \(known.since)"
    if let until = known.until { text += " until \(until)" }
    switch known.source {
    case .question(let id): text += ", question \(id.uuidString)"
    case .observation(let seq): text += ", observation seq \(seq)"
    }
    return text
}
