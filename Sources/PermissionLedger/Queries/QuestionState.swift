internal import Crypto
import Foundation
import PermissionModel

/// Where a question stands.
public enum QuestionState: String, Hashable, Sendable, CaseIterable {
    /// Asked, and not yet answered, canceled, failed or expired.
    case pending
    /// The guardian picked an approval.
    case approved
    /// The guardian picked a denial.
    case denied
    /// The child canceled the send flow: the guardian never saw it.
    case canceled
    /// `AskCenter.ask` threw: it was never sent.
    case failed
    /// The app stopped waiting (a `question.expired` event), or its `expiresAt` passed while pending. A late
    /// answer still moves it on to `approved` or `denied`.
    case expired

    /// Every state but `pending` and `expired` is final.
    public var isFinal: Bool { self != .pending && self != .expired }
}
