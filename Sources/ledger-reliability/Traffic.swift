import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel

/// Valid traffic for one writer: questions and how they end, observations and permission changes.
///
/// Event ids carry the writer's own prefix, so concurrent writers never collide, and `recordedAt` is left to
/// the ledger's clock, so their events never break "recordedAt never decreases along the log". Questions
/// have no `expiresAt` and offer only permanent choices, and observations check handles of a pool no
/// question asks about: a reader can then tell each question's state and each approved handle from the
/// log alone.
struct Traffic {
    private var random: SeededRandom
    var prefix: String
    private var count = 0
    /// Asked and not yet ended, oldest first.
    private var pending: [(id: UUID, subject: String)] = []

    init(seed: UInt64, prefix: String) {
        random = SeededRandom(seed: seed)
        self.prefix = prefix
    }

    /// The subjects every writer shares.
    static let subjects = (0..<16).map { "kid-\($0)" }

    /// The next event: 40% questions, 40% their ends, 10% observations, 10% permission changes.
    mutating func next() -> PermissionEvent {
        count += 1
        let id = "\(prefix)-\(count)"
        let now = Timestamp(Date())
        let subject = Self.subjects[Int.random(in: 0..<Self.subjects.count, using: &random)]
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 40 || (roll < 80 && pending.isEmpty) {
            let question = askQuestion()
            pending.append((question.id, subject))
            return PermissionEvent(id: id, subject: subject, occurredAt: now, payload: .questionAsked(question))
        }
        if roll < 80 {
            let (question, owner) = pending.removeFirst()
            let payload: PermissionEvent.Payload = switch Int.random(in: 0..<10, using: &random) {
            case 0: .questionSendCanceled(questionID: question)
            case 1: .questionAskFailed(questionID: question, error: AskError(code: .systemError, message: "simulated"))
            case 2: .questionExpired(questionID: question)
            case 3...6: .questionAnswered(questionID: question, choiceID: "approve", via: .messages)
            default: .questionAnswered(questionID: question, choiceID: "decline", via: .inPerson)
            }
            return PermissionEvent(id: id, subject: owner, occurredAt: now, payload: payload)
        }
        if roll < 90 {
            let checked = (0..<2).map { _ in Self.observedHandle(Int.random(in: 0..<1000, using: &random)) }
            return PermissionEvent(id: id, subject: subject, occurredAt: now,
                                   payload: try! .handlesObserved(checking: checked, known: [checked[0]]))
        }
        let permission = SystemPermission.allCases[Int.random(in: 0..<SystemPermission.allCases.count, using: &random)]
        let state = SystemPermission.State.allCases[Int.random(in: 0..<SystemPermission.State.allCases.count, using: &random)]
        return PermissionEvent(id: id, subject: subject, occurredAt: now,
                               payload: .permissionChanged(permission, state: state, cause: .systemPrompt))
    }

    /// `count` events in order, for one append call.
    mutating func next(_ count: Int) -> [PermissionEvent] {
        (0..<count).map { _ in next() }
    }

    /// An event the ledger must reject (an answer to a question nobody asked), under the id prefix `x-`
    /// that valid traffic never uses, so that a reader can tell whether a rejected event ever showed.
    mutating func rejectable() -> PermissionEvent {
        count += 1
        return PermissionEvent(id: "x-\(prefix)-\(count)", subject: Self.subjects[0], occurredAt: Timestamp(Date()),
                               payload: .questionAnswered(questionID: uuid(), choiceID: "approve", via: .messages))
    }

    private mutating func askQuestion() -> PermissionQuestion {
        let people = (0..<Int.random(in: 1...3, using: &random)).map { _ in
            PersonInformation(handle: Self.askedHandle(Int.random(in: 0..<1_000_000, using: &random)))
        }
        return try! PermissionQuestion(
            id: uuid(), topic: .communication(try! CommunicationTopic(personInformation: people, actions: [.message])))
    }

    private mutating func uuid() -> UUID {
        let (a, b) = (random.next(), random.next())
        return withUnsafeBytes(of: (a, b)) { raw in
            UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6] & 0x0F | 0x40, raw[7],
                        raw[8] & 0x3F | 0x80, raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
    }

    /// Handles that questions ask about (custom handles and phone numbers).
    static func askedHandle(_ i: Int) -> CommunicationHandle {
        i.isMultiple(of: 2)
            ? try! CommunicationHandle(value: "player\(i)", kind: .custom)
            : try! CommunicationHandle(value: "+1555\(String(format: "%07d", i))", kind: .phoneNumber)
    }

    /// Handles that observations check (email addresses): never asked about.
    static func observedHandle(_ i: Int) -> CommunicationHandle {
        try! CommunicationHandle(value: "synced\(i)@example.com", kind: .emailAddress)
    }
}
