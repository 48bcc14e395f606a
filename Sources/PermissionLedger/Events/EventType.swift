import Foundation
import PermissionModel

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
    /// `subject.erased`: the subject's personal fields recorded before it are erased.
    case subjectErased = "subject.erased"
}
