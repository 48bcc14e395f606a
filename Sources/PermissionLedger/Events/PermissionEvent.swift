import Foundation
import PermissionModel

/// One immutable fact recorded in the ledger.
///
/// The envelope (`id`, `subject`, `occurredAt`, `recordedAt`) is common to every event; ``payload`` holds
/// what is particular to its ``EventType``. `recordedAt`, `seq` and `hash` are assigned by the ledger when the
/// event is appended; on input they may be given (see docs/spec/EVENTS.md) and are then checked.
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
    /// The secret salt of the commitment to the event's personal fields, which the chain hash covers in their
    /// place (docs/STORAGE.md, "Event records, format version 2"): set on events read back from a ledger that
    /// has them, written in exports, and given on import, so that an import reproduces the same hashes. `nil`
    /// lets the ledger draw a new one. Not compared by `==`: it is how the event was stored, not what it says.
    public var salt: [UInt8]?
    /// Set on an event read back whose personal fields an erasure made unreadable: which erasure. Its personal
    /// fields (names, handle values, error messages) are then empty; everything else is as recorded.
    public var erased: ErasureMark?
    /// What an erased event keeps of its personal fields: set with ``erased`` on an event read back, written in
    /// exports, and given on import, so that an import of an erased event restores its record and hash. Not
    /// compared by `==`, as ``salt`` is not.
    public var erasedFields: ErasedFields?

    /// Creates an event to append. Leave `recordedAt`, `seq` and `hash` out to let the ledger assign them;
    /// when given, the ledger checks them instead (see docs/spec/EVENTS.md). The payload's rules are checked on append.
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

    /// Whether two events say the same: their id, subject, times, `seq`, hash, payload and erasure. The salt of
    /// their commitment, and what an erased event keeps in place of its fields, are not compared.
    public static func == (lhs: PermissionEvent, rhs: PermissionEvent) -> Bool {
        lhs.id == rhs.id && lhs.subject == rhs.subject && lhs.occurredAt == rhs.occurredAt && lhs.recordedAt == rhs.recordedAt
            && lhs.seq == rhs.seq && lhs.hash == rhs.hash && lhs.payload == rhs.payload && lhs.erased == rhs.erased
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(subject)
        hasher.combine(occurredAt)
        hasher.combine(recordedAt)
        hasher.combine(seq)
        hasher.combine(hash)
        hasher.combine(payload)
        hasher.combine(erased)
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
        /// `subject.erased`: the subject's personal fields recorded before it are erased (docs/spec/PRIVACY.md).
        case subjectErased(Erasure)
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
        case .subjectErased: .subjectErased
        }
    }

    /// The question the event is about, if any.
    public var questionID: UUID? {
        switch payload {
        case .questionAsked(let question): question.id
        case .questionSendCanceled(let id), .questionExpired(let id): id
        case .questionAskFailed(let id, _): id
        case .questionAnswered(let id, _, _): id
        case .handlesObserved, .permissionChanged, .subjectErased: nil
        }
    }
}

extension PermissionEvent.Payload {
    /// A `handles.observed` payload checked as docs/spec/EVENTS.md requires: `checked` is not empty and `known` is a
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
                "this \(handle.kind.rawValue) handle is not among the checked handles; known must be a subset of checked",
                field: "known[\(index)]")
        }
        func folded(_ handles: [CommunicationHandle]) -> [CommunicationHandle] {
            var seen = Set<CommunicationHandle>()
            return handles.filter { seen.insert($0).inserted }
        }
        return .handlesObserved(checked: folded(checked), known: folded(known))
    }
}
