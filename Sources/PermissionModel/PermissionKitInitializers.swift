import Foundation

// The initializers PermissionKit offers on `PermissionQuestion`, for code written against it.

extension PermissionQuestion {
    /// A question about one contact handle, with the default choices (approve and decline), as
    /// PermissionKit's `PermissionQuestion(handle:)`.
    ///
    /// - Throws: ``PermissionModelError`` when `expiresAt` or the handle is invalid.
    public init(handle: CommunicationHandle, id: UUID = UUID(), expiresAt: Timestamp? = nil) throws(PermissionModelError) {
        try self.init(handles: [handle], id: id, expiresAt: expiresAt)
    }

    /// A question about several contact handles, with the default choices (approve and decline), as
    /// PermissionKit's `PermissionQuestion(handles:)`.
    ///
    /// - Throws: ``PermissionModelError`` when `handles` is empty.
    public init(handles: [CommunicationHandle], id: UUID = UUID(), expiresAt: Timestamp? = nil) throws(PermissionModelError) {
        try self.init(communicationTopic: CommunicationTopic(handles: handles), id: id, expiresAt: expiresAt)
    }

    /// A question about a communication topic (people and the actions asked for), as PermissionKit's
    /// `PermissionQuestion(communicationTopic:)`.
    public init(
        communicationTopic: CommunicationTopic, id: UUID = UUID(),
        choices: [PermissionChoice] = [.approve, .decline], expiresAt: Timestamp? = nil
    ) throws(PermissionModelError) {
        try self.init(id: id, topic: .communication(communicationTopic), choices: choices, expiresAt: expiresAt)
    }

    /// A question asking consent to a significant app update, as PermissionKit's
    /// `PermissionQuestion(significantAppUpdateTopic:)`.
    public init(
        significantAppUpdateTopic: SignificantAppUpdateTopic, id: UUID = UUID(), expiresAt: Timestamp? = nil
    ) throws(PermissionModelError) {
        try self.init(id: id, topic: .significantAppUpdate(significantAppUpdateTopic), expiresAt: expiresAt)
    }
}
