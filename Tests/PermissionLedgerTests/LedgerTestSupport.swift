import Foundation
@_spi(StorageEngine) import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

// MARK: Temporary ledgers

/// Runs `body` with the path of a fresh temporary directory, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("PermissionLedgerTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url.path)
}

/// Runs `body` with a fresh ledger in a temporary directory (which the ledger creates), removed afterwards.
///
/// Ledgers are not durable by default: these are throwaway ledgers, and a test about durability says so.
///
/// With `seed`, the ledger draws its keys, salts and nonces from that seed (tests only): two ledgers of one seed
/// that are given the same events in the same order store the same bytes and hashes.
func withLedger<T>(
    durable: Bool = false, mapSize: Int = 1 << 20, seed: String? = nil, _ body: (Ledger) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory async throws in
        var options = Ledger.Options(mapSize: mapSize, durable: durable)
        if let seed { options.secrets = .seeded(seed) }
        let ledger = try Ledger(path: directory + "/ledger", options: options)
        return try await body(ledger)
    }
}

/// The path of a ledger holding one event, in a temporary directory, no longer open in this process.
func withClosedLedgerOfOneEvent<T>(_ body: (String) async throws -> T) async throws -> T {
    try await withTemporaryDirectory { directory async throws in
        let path = directory + "/ledger"
        try await Ledger(path: path, options: .init(durable: false))
            .append(json: JSONLine.permission("p1", "camera", "denied", at: "09:00:00", recorded: "09:00:01"))
        return try await body(path)
    }
}

extension Ledger.Options {
    /// Options whose keys, salts and nonces come from a fixed seed (tests only): ledgers of one seed that are
    /// given the same events hold the same bytes, however the events are batched.
    /// A new ledger is made in storage `format`.
    static func seeded(_ seed: String = "tests", mapSize: Int = 64 << 20, durable: Bool = true, format: UInt8 = Ledger.formatVersion) -> Ledger.Options {
        var options = Ledger.Options(mapSize: mapSize, durable: durable)
        options.secrets = .seeded(seed)
        options.newLedgerFormat = format
        return options
    }

    /// The storage formats a ledger of this build's may be in, with personal fields sealed: this build makes the
    /// latest, and keeps writing the ledgers made in the others.
    static let sealedFormats: [UInt8] = Array(2...Ledger.formatVersion)
}

/// Runs `body` with two fresh ledgers that draw their secrets from the same seed: given the same events, they
/// hold the same bytes.
func withTwoLedgers<T>(
    _ options: Ledger.Options = .seeded("two ledgers", mapSize: 1 << 20, durable: false), _ body: (Ledger, Ledger) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory async throws in
        try await body(try Ledger(path: directory + "/a", options: options), try Ledger(path: directory + "/b", options: options))
    }
}

// MARK: Fixtures

/// The fixture library in `Fixtures/` at the package root, read with PermissionLedgerTesting's ``Fixture``;
/// raw lines only for the tests of the JSON reader itself and of the invalid fixtures, which ``Fixture`` refuses.
enum Fixtures {
    /// `<package>/Fixtures`, found from this file's path (`<package>/Tests/PermissionLedgerTests/…`).
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // PermissionLedgerTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("Fixtures")

    /// The valid fixtures' file names, sorted (`AcceptanceRuleTests` checks that there are some).
    static let valid: [String] = (try? Fixture.fileNames(in: directory)) ?? []
    /// The invalid fixtures' file names (relative to `invalid/`), sorted.
    static let invalid: [String] = (try? Fixture.fileNames(in: directory.appendingPathComponent("invalid"))) ?? []

    static func url(_ name: String, invalid: Bool = false) -> URL {
        invalid ? directory.appendingPathComponent("invalid").appendingPathComponent(name) : directory.appendingPathComponent(name)
    }

    /// A valid fixture: its events, and the line each came from.
    static func fixture(_ name: String) throws -> Fixture {
        try Fixture(contentsOf: url(name))
    }

    /// The file's physical lines (1-based numbers), without their `\n`, as bytes the JSON reader has not seen.
    static func rawLines(_ name: String, invalid: Bool = false) throws -> [(number: Int, bytes: [UInt8])] {
        var lines = try Data(contentsOf: url(name, invalid: invalid)).split(separator: 0x0A, omittingEmptySubsequences: false)
            .enumerated().map { ($0.offset + 1, Array($0.element)) }
        if lines.last?.1.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// The comment lines (`#` …) of a fixture, without the `# `.
    static func header(_ name: String, invalid: Bool = false) throws -> [String] {
        try rawLines(name, invalid: invalid).compactMap { line in
            let text = String(decoding: line.bytes, as: UTF8.self)
            return text.hasPrefix("#") ? String(text.dropFirst().drop { $0 == " " }) : nil
        }
    }
}

// MARK: Ledger helpers

extension Ledger {
    /// The whole export as one string.
    func exportText(after: UInt64 = 0) throws -> String {
        var text = ""
        try export(after: after) { text += $0 }
        return text
    }

    /// Imports a fixture into the ledger.
    @discardableResult
    func importFixture(_ name: String) async throws -> AppendSummary {
        try await append(try Fixtures.fixture(name).events)
    }

    /// Appends events given as JSON lines.
    @discardableResult
    func append(json lines: String...) async throws -> AppendSummary {
        try await append(try lines.map { try decodeEvent($0) })
    }
}

/// Decodes one JSON line that must hold an event.
func decodeEvent(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> PermissionEvent {
    try #require(try EventJSON.decode(line: json), sourceLocation: sourceLocation)
}

/// Parses an RFC 3339 time.
func time(_ text: String) throws -> Timestamp { try Timestamp(rfc3339: text) }

/// Runs `body`, which must throw ``AppendRejected``, and returns the rejections.
func rejections(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> [(index: Int, rejection: EventRejection)] {
    do {
        try await body()
        Issue.record("expected AppendRejected, but nothing was rejected", sourceLocation: sourceLocation)
    } catch let error as AppendRejected {
        return error.rejections
    } catch {
        Issue.record("expected AppendRejected, got \(error)", sourceLocation: sourceLocation)
    }
    return []
}

/// Runs `body`, which must throw ``LedgerError``, and returns it.
func ledgerError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> LedgerError? {
    do {
        try body()
        Issue.record("expected LedgerError, but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as LedgerError {
        return error
    } catch {
        Issue.record("expected LedgerError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

// MARK: Inline events

/// JSON lines for inline scenarios. Every time is on 2026-11-20 and written `HH:MM:SS` (UTC).
enum JSONLine {
    static func at(_ hms: String) -> String { "2026-11-20T\(hms)Z" }

    static func handle(_ value: String, _ kind: String) -> String {
        #"{"value":"\#(value)","kind":"\#(kind)"}"#
    }

    /// `question.asked` about people given as (value, kind), or an update when `people` is empty.
    static func asked(
        _ id: String, question: String, subject: String = "kid-ava", at occurred: String, recorded: String,
        people: [(String, String)] = [("dragonslayer42", "custom")], choices: String? = nil,
        defaultChoice: String? = nil, expiresAt: String? = nil
    ) -> String {
        let topic = people.isEmpty
            ? #"{"significantAppUpdate":{"description":"Version 5 adds chat."}}"#
            : #"{"communication":{"people":[\#(people.map { #"{"handle":\#(handle($0.0, $0.1))}"# }.joined(separator: ","))],"actions":["message"]}}"#
        var q = #"{"id":"\#(question)","topic":\#(topic)"#
        if let choices { q += #","choices":\#(choices)"# }
        if let defaultChoice { q += #","defaultChoice":"\#(defaultChoice)""# }
        if let expiresAt { q += #","expiresAt":"\#(at(expiresAt))""# }
        q += "}"
        return #"{"type":"question.asked","id":"\#(id)","subject":"\#(subject)","occurredAt":"\#(at(occurred))","recordedAt":"\#(at(recorded))","question":\#(q)}"#
    }

    static func answered(
        _ id: String, question: String, choice: String, via: String? = nil, subject: String = "kid-ava",
        at occurred: String, recorded: String
    ) -> String {
        let viaField = via.map { #","via":"\#($0)""# } ?? ""
        return #"{"type":"question.answered","id":"\#(id)","subject":"\#(subject)","occurredAt":"\#(at(occurred))","recordedAt":"\#(at(recorded))","questionId":"\#(question)","choiceId":"\#(choice)"\#(viaField)}"#
    }

    /// `question.expired` or `question.sendCanceled`.
    static func simple(_ type: String, _ id: String, question: String, subject: String = "kid-ava", at occurred: String, recorded: String) -> String {
        #"{"type":"\#(type)","id":"\#(id)","subject":"\#(subject)","occurredAt":"\#(at(occurred))","recordedAt":"\#(at(recorded))","questionId":"\#(question)"}"#
    }

    static func expired(_ id: String, question: String, subject: String = "kid-ava", at occurred: String, recorded: String) -> String {
        simple("question.expired", id, question: question, subject: subject, at: occurred, recorded: recorded)
    }

    static func canceled(_ id: String, question: String, subject: String = "kid-ava", at occurred: String, recorded: String) -> String {
        simple("question.sendCanceled", id, question: question, subject: subject, at: occurred, recorded: recorded)
    }

    static func failed(
        _ id: String, question: String, code: String, message: String? = nil, subject: String = "kid-ava",
        at occurred: String, recorded: String
    ) -> String {
        let messageField = message.map { #","message":"\#($0)""# } ?? ""
        return #"{"type":"question.askFailed","id":"\#(id)","subject":"\#(subject)","occurredAt":"\#(at(occurred))","recordedAt":"\#(at(recorded))","questionId":"\#(question)","error":{"code":"\#(code)"\#(messageField)}}"#
    }

    static func observed(
        _ id: String, subject: String = "kid-ava", checked: [(String, String)], known: [(String, String)],
        at occurred: String, recorded: String
    ) -> String {
        let c = checked.map { handle($0.0, $0.1) }.joined(separator: ",")
        let k = known.map { handle($0.0, $0.1) }.joined(separator: ",")
        return #"{"type":"handles.observed","id":"\#(id)","subject":"\#(subject)","occurredAt":"\#(at(occurred))","recordedAt":"\#(at(recorded))","checked":[\#(c)],"known":[\#(k)]}"#
    }

    static func permission(
        _ id: String, subject: String = "kid-ava", _ permission: String, _ state: String, cause: String? = nil,
        at occurred: String, recorded: String
    ) -> String {
        let causeField = cause.map { #","cause":"\#($0)""# } ?? ""
        return #"{"type":"permission.changed","id":"\#(id)","subject":"\#(subject)","occurredAt":"\#(at(occurred))","recordedAt":"\#(at(recorded))","permission":"\#(permission)","state":"\#(state)"\#(causeField)}"#
    }

    /// Choices with a one-hour approval, a permanent approval and a denial.
    static let timeLimitedChoices =
        #"[{"id":"approve-1h","title":"Approve for one hour","answer":"approval","grantSeconds":3600},{"id":"approve-2h","title":"Approve for two hours","answer":"approval","grantSeconds":7200},{"id":"approve","title":"Approve","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}]"#
}

/// Question ids for inline scenarios.
enum QID {
    static let q1 = "6A3F1C2E-7E57-4000-8000-000000000001"
    static let q2 = "6A3F1C2E-7E57-4000-8000-000000000002"
    static let q3 = "6A3F1C2E-7E57-4000-8000-000000000003"
    static func uuid(_ text: String) -> UUID { UUID(uuidString: text)! }
}

/// A known handle as a plain value that tests can build (``KnownHandle``'s initializer is internal).
struct KnownGrant: Hashable, Sendable {
    var handle: CommunicationHandle
    var since: Timestamp
    var until: Timestamp?
    var source: HandleSource

    init(handle: CommunicationHandle, since: Timestamp, until: Timestamp?, source: HandleSource) {
        self.handle = handle
        self.since = since
        self.until = until
        self.source = source
    }

    /// An erased entry's handle is its kind and the value `(erased)`: its value is gone (docs/spec/PRIVACY.md).
    init(_ known: KnownHandle) {
        let handle = known.erased == nil ? known.handle : Self.erased(known.handle.kind)
        self.init(handle: handle, since: known.since, until: known.until, source: known.source)
    }

    /// The stand-in for an erased handle of `kind`.
    static func erased(_ kind: CommunicationHandle.Kind) -> CommunicationHandle {
        CommunicationHandle(normalizedValue: "(erased)", kind: kind)
    }
}

/// The seq of the last `subject.erased` among `events` (in seq order), 0 when there is none.
func lastErasureSeq(_ events: [PermissionEvent]) -> Int {
    events.lastIndex { $0.type == .subjectErased }.map { $0 + 1 } ?? 0
}

/// Every stored event of `ledger`, read on the calling thread (the tests' own scans; code on the cooperative
/// pool uses the `async` ``Ledger/forEachEvent(after:_:)``).
func storedEvents(_ ledger: Ledger, after seq: UInt64 = 0) throws -> [RecordedEvent] {
    var events: [RecordedEvent] = []
    try ledger.forEachEvent(after: seq) { events.append($0) }
    return events
}

/// The ledger's export, read on the calling thread.
func exportText(_ ledger: Ledger, after seq: UInt64 = 0) throws -> String {
    var text = ""
    try ledger.export(after: seq) { text += $0 }
    return text
}
