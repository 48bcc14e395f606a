import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

/// A one-line description of an event for tables.
func summary(_ event: PermissionEvent) -> String {
    switch event.payload {
    case .questionAsked(let q):
        let about = q.topic.handles.isEmpty ? "app update" : handlesText(q.topic.handles)
        return "\(tableID(q.id)) about \(about)"
    case .questionSendCanceled(let id), .questionExpired(let id):
        return tableID(id)
    case .questionAskFailed(let id, let error):
        return "\(tableID(id)) \(error.code.rawValue)"
    case .questionAnswered(let id, let choice, let via):
        return "\(tableID(id)) \(choice) via \(via.rawValue)"
    case .handlesObserved(let checked, let known):
        let knownSet = Set(known)
        return checked.map { "\($0.value)\(knownSet.contains($0) ? "" : " (not known)")" }.joined(separator: ", ")
    case .permissionChanged(let p, let state, let cause):
        return "\(p.rawValue) → \(state.rawValue)\(cause.map { " (\($0.rawValue))" } ?? "")"
    }
}
