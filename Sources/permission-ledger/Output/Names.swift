import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

/// A name as people write it: prefix, given, middle, family, suffix, then the nickname in quotes.
func displayName(_ n: PersonNameComponents) -> String {
    var parts = [n.namePrefix, n.givenName, n.middleName, n.familyName, n.nameSuffix].compactMap { $0 }
    if let nick = n.nickname { parts.append("\"\(nick)\"") }
    return parts.joined(separator: " ")
}

/// A question's handles in one cell: their values as ``listCell(_:)`` joins them (`a; b`, a `;` in a value escaped).
func handlesText(_ handles: [Erasable<CommunicationHandle>]) -> String {
    listCell(handles.map { shownText($0.map(\.value)) })
}

/// A personal value as tables and CSV show it: itself, or `(erased, seq N)`.
func shownText(_ value: Erasable<String>) -> String {
    switch value {
    case .readable(let text): text
    case .erased(let mark): erasedText(mark)
    }
}
