import Foundation

/// One of the answers a guardian can pick. The corresponding PermissionKit type is `PermissionChoice`.
public struct PermissionChoice: Hashable, Sendable, Identifiable {
    /// Whether a choice grants or refuses. The corresponding PermissionKit type is `PermissionChoice.Answer`.
    public enum Answer: String, Hashable, Sendable, CaseIterable {
        /// Picking the choice grants the request.
        case approval
        /// Picking the choice refuses the request.
        case denial
    }

    /// The choice's id (not empty); a question's choices have different ids.
    public let id: String
    /// The text the guardian sees (not empty).
    public let title: String
    /// Whether picking the choice grants or refuses the request.
    public let answer: Answer
    /// On approvals only: the approval lapses this many seconds after the answer occurred.
    public let grantSeconds: Int64?

    /// Validates a choice.
    ///
    /// - Throws: ``PermissionModelError`` for an empty id or title, an id holding a control, format or
    ///   separator character, a title holding a control character other than tab and line feed (docs/spec/EVENTS.md
    ///   "Text"), or a `grantSeconds` that is not positive or is given on a denial.
    public init(id: String, title: String, answer: Answer, grantSeconds: Int64? = nil) throws(PermissionModelError) {
        try validateIdentifier(id, field: "id")
        guard !title.isEmpty else { throw PermissionModelError("must not be empty", field: "title") }
        try validateFreeText(title, field: "title")
        if let grantSeconds {
            guard answer == .approval else {
                throw PermissionModelError("is allowed on approvals only", field: "grantSeconds")
            }
            guard grantSeconds > 0 else {
                throw PermissionModelError("must be a positive number of seconds, not \(grantSeconds)", field: "grantSeconds")
            }
        }
        self.id = id
        self.title = title
        self.answer = answer
        self.grantSeconds = grantSeconds
    }

    /// A choice already validated, as stored records hold it.
    package init(uncheckedID id: String, title: String, answer: Answer, grantSeconds: Int64? = nil) {
        self.id = id
        self.title = title
        self.answer = answer
        self.grantSeconds = grantSeconds
    }

    /// PermissionKit's `.approve`: id `approve`, title `Approve`.
    public static let approve = PermissionChoice(uncheckedID: "approve", title: "Approve", answer: .approval)
    /// PermissionKit's `.decline`: id `decline`, title `Decline`.
    public static let decline = PermissionChoice(uncheckedID: "decline", title: "Decline", answer: .denial)
}

/// A question a child sends to a parent or guardian. The corresponding PermissionKit type is `PermissionQuestion`.
///
/// ```swift
/// let alex = try CommunicationHandle(value: "dragonslayer42", kind: .custom)
/// let question = try PermissionQuestion(
///     id: UUID(), topic: .communication(try CommunicationTopic(handles: [alex], actions: [.message])))
/// question.defaultChoice  // .decline, the most restrictive
/// ```
public struct PermissionQuestion: Hashable, Sendable, Identifiable {
    /// The question's id.
    public let id: UUID
    /// What the question is about.
    public let topic: QuestionTopic
    /// The answers the guardian can pick: at least one approval and one denial, with different ids.
    public let choices: [PermissionChoice]
    /// The id of the choice applied when the system answers by default.
    public let defaultChoiceID: String
    /// From this time on the guardian can no longer answer.
    public let expiresAt: Timestamp?

    /// The choice the system applies by default: among ``choices`` by construction.
    public var defaultChoice: PermissionChoice { choices.first { $0.id == defaultChoiceID }! }

    /// PermissionKit's `expirationDate`.
    public var expirationDate: Date? { expiresAt?.date }

    /// The choice with this id, if the question offers it.
    public func choice(id: String) -> PermissionChoice? { choices.first { $0.id == id } }

    /// Validates a question.
    ///
    /// - Parameters:
    ///   - id: the question's id.
    ///   - topic: what the question is about.
    ///   - choices: defaults to `[.approve, .decline]`; needs at least one approval and one denial, with unique ids.
    ///   - defaultChoiceID: must be among the choices; defaults to the first denial.
    ///   - expiresAt: from this time on the guardian can no longer answer; `nil` for never.
    /// - Throws: ``PermissionModelError`` naming the offending field.
    public init(
        id: UUID,
        topic: QuestionTopic,
        choices: [PermissionChoice] = [.approve, .decline],
        defaultChoiceID: String? = nil,
        expiresAt: Timestamp? = nil
    ) throws(PermissionModelError) {
        var ids = Set<String>()
        for (index, choice) in choices.enumerated() where !ids.insert(choice.id).inserted {
            throw PermissionModelError("repeats the id \(quoted(choice.id)) of an earlier choice", field: "choices[\(index)].id")
        }
        guard choices.contains(where: { $0.answer == .approval }) else {
            throw PermissionModelError("must offer at least one approval", field: "choices")
        }
        guard let firstDenial = choices.first(where: { $0.answer == .denial }) else {
            throw PermissionModelError("must offer at least one denial", field: "choices")
        }
        if let defaultChoiceID, !ids.contains(defaultChoiceID) {
            throw PermissionModelError(
                "\(quoted(defaultChoiceID)) is not one of the choices: \(shownList(choices.map(\.id)))",
                field: "defaultChoice")
        }
        self.id = id
        self.topic = topic
        self.choices = choices
        self.defaultChoiceID = defaultChoiceID ?? firstDenial.id
        self.expiresAt = expiresAt
    }
}

extension PermissionQuestion {
    /// A question already validated, as stored records hold it. Only cheap structural checks:
    /// returns `nil` when the default choice is not among the choices.
    package init?(uncheckedID id: UUID, topic: QuestionTopic, choices: [PermissionChoice], defaultChoiceID: String, expiresAt: Timestamp?) {
        guard choices.contains(where: { $0.id == defaultChoiceID }) else { return nil }
        self.id = id
        self.topic = topic
        self.choices = choices
        self.defaultChoiceID = defaultChoiceID
        self.expiresAt = expiresAt
    }
}

/// Why an ask failed. The corresponding PermissionKit type is `AskError`.
public struct AskError: Error, Hashable, Sendable {
    /// The cases of PermissionKit's `AskError`.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// Communication Limits are not turned on in Screen Time.
        case communicationLimitsNotEnabled
        /// Contacts are not synced with iCloud.
        case contactSyncNotSetup
        /// The system found the question invalid.
        case invalidQuestion
        /// Asking is not available.
        case notAvailable
        /// The system failed; ``AskError/message`` holds the underlying error's description.
        case systemError
        /// An error PermissionKit does not identify.
        case unknown
    }

    /// Which error it was.
    public var code: Code
    /// The system's message, if any (for `systemError`, the underlying error's description).
    public var message: String?

    /// Creates an ask error.
    public init(code: Code, message: String? = nil) {
        self.code = code
        self.message = message
    }
}

/// How an answer reached the app.
public enum AnswerVia: String, Hashable, Sendable, CaseIterable {
    /// The guardian answered the question sent through Messages.
    case messages
    /// Approved in person on the child's device.
    case inPerson
    /// The system applied the question's default choice.
    case `default`
}
