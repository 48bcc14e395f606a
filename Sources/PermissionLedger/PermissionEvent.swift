import Foundation
import PermissionModel

/// One immutable fact recorded in the ledger.
///
/// The envelope (`id`, `subject`, `occurredAt`, `recordedAt`) is common to every event; ``payload`` holds
/// what is particular to its ``EventType``. `recordedAt`, `seq` and `hash` are assigned by the ledger when the
/// event is appended; on input they may be given (see EVENTS.md) and are then checked.
public struct PermissionEvent: Hashable, Sendable {
    /// The event's id, unique in the ledger: the idempotency key.
    public var id: String
    /// The person the event is about: the child who asks, or the user whose system permission changed.
    public var subject: String
    /// When it happened, as the device reported it.
    public var occurredAt: Timestamp
    /// When the ledger recorded it; `nil` lets the ledger's clock assign it.
    public var recordedAt: Timestamp?
    /// The event's position in the log, 1-based.
    public var seq: UInt64?
    /// The chain hash after this event.
    public var hash: ChainHash?
    /// What happened.
    public var payload: Payload

    /// Creates an event to append. Leave `recordedAt`, `seq` and `hash` out to let the ledger assign them;
    /// when given, the ledger checks them instead (see EVENTS.md). The payload's rules are checked on append.
    public init(
        id: String, subject: String, occurredAt: Timestamp, recordedAt: Timestamp? = nil,
        seq: UInt64? = nil, hash: ChainHash? = nil, payload: Payload
    ) {
        self.id = id
        self.subject = subject
        self.occurredAt = occurredAt
        self.recordedAt = recordedAt
        self.seq = seq
        self.hash = hash
        self.payload = payload
    }

    /// What is particular to each type of event.
    public enum Payload: Hashable, Sendable {
        /// `question.asked`: the app asked the child to send a question.
        case questionAsked(PermissionQuestion)
        /// `question.sendCanceled`: the child cancelled the send flow.
        case questionSendCanceled(questionID: UUID)
        /// `question.askFailed`: `AskCenter.ask` threw; the question was never sent.
        case questionAskFailed(questionID: UUID, error: AskError)
        /// `question.answered`: the guardian picked one of the question's choices.
        case questionAnswered(questionID: UUID, choiceID: String, via: AnswerVia)
        /// `question.expired`: the app stopped waiting for an answer.
        case questionExpired(questionID: UUID)
        /// `handles.observed`: what `CommunicationLimits.knownHandles(in:)` returned.
        case handlesObserved(checked: [CommunicationHandle], known: [CommunicationHandle])
        /// `permission.changed`: a system permission's state changed.
        case permissionChanged(SystemPermission, state: SystemPermission.State, cause: SystemPermission.Cause?)
    }

    /// The event's type.
    public var type: EventType {
        switch payload {
        case .questionAsked: .questionAsked
        case .questionSendCanceled: .questionSendCanceled
        case .questionAskFailed: .questionAskFailed
        case .questionAnswered: .questionAnswered
        case .questionExpired: .questionExpired
        case .handlesObserved: .handlesObserved
        case .permissionChanged: .permissionChanged
        }
    }

    /// The question the event is about, if any.
    public var questionID: UUID? {
        switch payload {
        case .questionAsked(let question): question.id
        case .questionSendCanceled(let id), .questionExpired(let id): id
        case .questionAskFailed(let id, _): id
        case .questionAnswered(let id, _, _): id
        case .handlesObserved, .permissionChanged: nil
        }
    }
}

extension PermissionEvent.Payload {
    /// A `handles.observed` payload checked as EVENTS.md requires: `checked` is not empty and `known` is a
    /// subset of it; repeated handles are folded, as the JSON form does.
    ///
    /// - Throws: ``/PermissionModel/PermissionModelError`` naming `checked` or `known[i]`.
    public static func handlesObserved(
        checking checked: [CommunicationHandle], known: [CommunicationHandle]
    ) throws(PermissionModelError) -> Self {
        guard !checked.isEmpty else { throw PermissionModelError("must list at least one handle", field: "checked") }
        // What `CommunicationLimits` returns is a few handles: compared pairwise, they need no hashing
        // (a handle hashes its text), and lists without duplicates are kept as they are.
        if checked.count <= 16, known.count <= 16 {
            func isFolded(_ handles: [CommunicationHandle]) -> Bool {
                handles.indices.allSatisfy { i in !handles[..<i].contains(handles[i]) }
            }
            if known.allSatisfy(checked.contains), isFolded(checked), isFolded(known) {
                return .handlesObserved(checked: checked, known: known)
            }
        }
        let checkedSet = Set(checked)
        for (index, handle) in known.enumerated() where !checkedSet.contains(handle) {
            throw PermissionModelError(
                "\(quoted(handle.value)) (\(handle.kind.rawValue)) is not among the checked handles; known must be a subset of checked",
                field: "known[\(index)]")
        }
        func folded(_ handles: [CommunicationHandle]) -> [CommunicationHandle] {
            var seen = Set<CommunicationHandle>()
            return handles.filter { seen.insert($0).inserted }
        }
        return .handlesObserved(checked: folded(checked), known: folded(known))
    }
}

/// The type of an event, named as in the JSON Lines form.
public enum EventType: String, Hashable, Sendable, CaseIterable {
    /// `question.asked`: the app asked the child to send a question.
    case questionAsked = "question.asked"
    /// `question.sendCanceled`: the child cancelled the send flow.
    case questionSendCanceled = "question.sendCanceled"
    /// `question.askFailed`: `AskCenter.ask` threw; the question was never sent.
    case questionAskFailed = "question.askFailed"
    /// `question.answered`: the guardian picked one of the question's choices.
    case questionAnswered = "question.answered"
    /// `question.expired`: the app stopped waiting for an answer.
    case questionExpired = "question.expired"
    /// `handles.observed`: what `CommunicationLimits.knownHandles(in:)` returned.
    case handlesObserved = "handles.observed"
    /// `permission.changed`: a system permission's state changed.
    case permissionChanged = "permission.changed"
}

/// A SHA-256 chain hash: SHA-256 over the previous event's hash followed by the event's stored bytes.
public struct ChainHash: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes.
    public let bytes: [UInt8]

    /// The hash before the first event: 32 zero bytes.
    public static let genesis = ChainHash(unchecked: [UInt8](repeating: 0, count: 32))

    /// A hash from its 32 bytes as stored, not checked: for storage engines that keep the bytes themselves.
    @_spi(StorageEngine) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// Parses 64 lowercase hex digits.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            guard let hi = Self.nibble(utf8[2 * i]), let lo = Self.nibble(utf8[2 * i + 1]) else { return nil }
            out[i] = hi << 4 | lo
        }
        bytes = out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// 64 lowercase hex digits.
    public var description: String { hexString(bytes) }
}

func hexString(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
