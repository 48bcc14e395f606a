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

func handlesText(_ handles: [CommunicationHandle]) -> String {
    handles.map(\.value).joined(separator: ", ")
}
