import Foundation

/// A person a child wants to talk to: a handle and, optionally, their name.
/// The corresponding PermissionKit type is `CommunicationTopic.PersonInformation`.
public struct PersonInformation: Hashable, Sendable {
    /// How to reach the person.
    public var handle: CommunicationHandle
    /// The person's name, when the app knows it.
    public var nameComponents: PersonNameComponents?

    /// Creates a person from a handle and, optionally, a name.
    public init(handle: CommunicationHandle, nameComponents: PersonNameComponents? = nil) {
        self.handle = handle
        self.nameComponents = nameComponents
    }
}

/// A request to communicate with one or more people.
/// The corresponding PermissionKit type is `CommunicationTopic`.
public struct CommunicationTopic: Hashable, Sendable {
    /// What the child wants to do with the people. The corresponding PermissionKit type is `CommunicationTopic.Action`.
    ///
    /// `allCases` is the canonical order in which actions are written.
    public enum Action: String, Hashable, Sendable, CaseIterable {
        /// Exchange messages.
        case message
        /// Make and receive audio calls.
        case audioCall
        /// Make and receive video calls.
        case videoCall
        /// Make and receive calls.
        case call
        /// Chat with the people.
        case chat
        /// Follow the people.
        case follow
        /// Be followed by the people.
        case beFollowed
        /// Become friends with the people.
        case friend
        /// Connect with the people.
        case connect
        /// Communicate with the people, in general.
        case communicate
    }

    /// The people, in the order the app gave them.
    public let personInformation: [PersonInformation]
    /// The actions asked for.
    public let actions: Set<Action>

    /// The handles of the people, in order.
    public var handles: [CommunicationHandle] { personInformation.map(\.handle) }

    /// The actions in canonical order.
    public var orderedActions: [Action] { Action.allCases.filter(actions.contains) }

    /// Validates a topic about people.
    ///
    /// - Throws: ``PermissionModelError`` when there are no people or two people share a handle.
    public init(personInformation: [PersonInformation], actions: Set<Action> = []) throws(PermissionModelError) {
        guard !personInformation.isEmpty else {
            throw PermissionModelError("must name at least one person", field: "people")
        }
        // The message names the earlier person by position, not by the handle's value, which is personal.
        var seen: [CommunicationHandle: Int] = [:]
        for (index, person) in personInformation.enumerated() {
            if let earlier = seen[person.handle] {
                throw PermissionModelError("the same handle as people[\(earlier)]", field: "people[\(index)].handle")
            }
            seen[person.handle] = index
        }
        self.personInformation = personInformation
        self.actions = actions
    }

    /// A topic already validated, as stored records hold it.
    package init(uncheckedPersonInformation personInformation: [PersonInformation], actions: Set<Action>) {
        self.personInformation = personInformation
        self.actions = actions
    }

    /// A topic about people given only by their handles.
    public init(handles: [CommunicationHandle], actions: Set<Action> = []) throws(PermissionModelError) {
        try self.init(personInformation: handles.map { PersonInformation(handle: $0) }, actions: actions)
    }
}

/// A significant update of the app that needs a guardian's consent.
/// The corresponding PermissionKit type is `SignificantAppUpdateTopic`.
public struct SignificantAppUpdateTopic: Hashable, Sendable {
    /// What the update is about, for the guardian (1 to 4096 bytes).
    public let description: String

    /// Validates an update topic.
    ///
    /// - Throws: ``PermissionModelError`` when the description is empty, longer than 4096 bytes, or holds a
    ///   control character other than tab and line feed.
    public init(description: String) throws(PermissionModelError) {
        let count = description.utf8.count
        guard (1...4096).contains(count) else {
            throw PermissionModelError("must be 1 to 4096 bytes long, not \(count)", field: "description")
        }
        try validateFreeText(description, field: "description")
        self.description = description
    }

    /// A topic already validated, as stored records hold it.
    package init(uncheckedDescription description: String) {
        self.description = description
    }
}

/// What a question is about: exactly one of PermissionKit's topics.
public enum QuestionTopic: Hashable, Sendable {
    /// A request to communicate with people.
    case communication(CommunicationTopic)
    /// A request for consent to a significant update of the app.
    case significantAppUpdate(SignificantAppUpdateTopic)

    /// `communication` or `significantAppUpdate`, as the JSON form names them.
    public var name: String {
        switch self {
        case .communication: "communication"
        case .significantAppUpdate: "significantAppUpdate"
        }
    }

    /// The handles the question is about (empty for an update).
    public var handles: [CommunicationHandle] {
        if case .communication(let topic) = self { return topic.handles }
        return []
    }
}
