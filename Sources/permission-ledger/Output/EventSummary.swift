import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

/// A one-line description of an event for tables and CSV, every value whole (question ids too).
/// An erased event's personal values each read `(erased, seq N)` (docs/spec/PRIVACY.md).
func summary(_ event: PermissionEvent) -> String {
    func shown(_ handles: [CommunicationHandle]) -> String {
        handlesText(handles.map { handle in event.erased.map { .erased($0) } ?? .readable(handle) })
    }
    switch event.payload {
    case .questionAsked(let q):
        let about = q.topic.handles.isEmpty ? "app update" : shown(q.topic.handles)
        return "\(q.id.uuidString) about \(about)"
    case .questionSendCanceled(let id), .questionExpired(let id):
        return id.uuidString
    case .questionAskFailed(let id, let error):
        return "\(id.uuidString) \(error.code.rawValue)"
    case .questionAnswered(let id, let choice, let via):
        return "\(id.uuidString) \(choice) via \(via.rawValue)"
    case .handlesObserved(let checked, let known) where event.erased != nil:
        // The values are gone, and with them which checked handle was a known one.
        return "checked: \(shown(checked)) | known: \(known.isEmpty ? "none" : shown(known))"
    case .handlesObserved(let checked, let known):
        // Two labelled lists, so that no handle's value can pass for a status (`known: a; b | not known: c`).
        let knownSet = Set(known)
        let said = [("known", checked.filter { knownSet.contains($0) }), ("not known", checked.filter { !knownSet.contains($0) })]
        return said.filter { !$0.1.isEmpty }.map { "\($0.0): \(shown($0.1))" }.joined(separator: " | ")
    case .permissionChanged(let p, let state, let cause):
        return "\(p.rawValue) → \(state.rawValue)\(cause.map { " (\($0.rawValue))" } ?? "")"
    case .subjectErased(let erasure):
        let cut = erasure.before.map { " before \($0)" } ?? ""
        return "\(erasure.basis.rawValue)\(erasure.reference.map { " \($0)" } ?? "")\(cut)"
    }
}

/// What tables and CSV show in place of an erased value.
func erasedText(_ mark: ErasureMark) -> String { "(erased, seq \(mark.seq))" }
