import Foundation
import PermissionModel

/// A question id as people give it: a whole UUID, or an abbreviation of its first and last groups
/// (`6A3F1C2E…000000000001`, also written with `...`), which ``resolve(in:)`` looks up among the questions
/// asked by a view's point. What `permission-ledger question` and `history --question` take.
public enum QuestionReference: Hashable, Sendable {
    /// A whole id.
    case id(UUID)
    /// The id's first and last characters, uppercase; together at least eight hex digits or dashes.
    case abbreviated(prefix: String, suffix: String)

    /// Reads a whole UUID or an abbreviation.
    ///
    /// - Throws: ``/PermissionModel/PermissionModelError`` saying what a question id looks like.
    public init(parsing text: String) throws(PermissionModelError) {
        if text.utf8.count == 36, let id = UUID(uuidString: text) {
            self = .id(id)
            return
        }
        let parts = text.replacingOccurrences(of: "...", with: "…").split(separator: "…", omittingEmptySubsequences: false)
        let hex = CharacterSet(charactersIn: "0123456789abcdefABCDEF-")
        guard parts.count == 2, parts.allSatisfy({ $0.unicodeScalars.allSatisfy(hex.contains) }), parts[0].count + parts[1].count >= 8 else {
            throw PermissionModelError("\(quoted(text)) is not a question id (a UUID such as 6A3F1C2E-0000-4000-8000-000000000001, or an abbreviation such as 6A3F1C2E…000000000001: its first and last groups)")
        }
        self = .abbreviated(prefix: parts[0].uppercased(), suffix: parts[1].uppercased())
    }

    /// Why an abbreviation names no single question.
    public struct Unresolved: Error, Hashable, Sendable, CustomStringConvertible {
        /// No question asked by the point matches, or several do.
        public enum Kind: Hashable, Sendable {
            /// No question matches.
            case noMatch
            /// Several questions match: the whole id is needed.
            case ambiguous
        }

        /// Which of the two it is.
        public var kind: Kind
        /// The reason, in plain words.
        public var description: String
    }

    /// The question's id: a whole id as it is; an abbreviation must match exactly one question asked by the
    /// view's point.
    ///
    /// - Throws: ``Unresolved`` when an abbreviation matches no question or several; ``LedgerError`` when the
    ///   ledger cannot be read.
    public func resolve(in view: LedgerView) throws -> UUID {
        switch self {
        case .id(let id):
            return id
        case .abbreviated(let prefix, let suffix):
            let matches = try view.questions().map(\.question.id).filter {
                $0.uuidString.hasPrefix(prefix) && $0.uuidString.hasSuffix(suffix)
            }
            guard matches.count == 1 else {
                throw matches.isEmpty
                    ? Unresolved(kind: .noMatch, description: "no question matches \(prefix)…\(suffix) as of seq \(view.point.seq)")
                    : Unresolved(kind: .ambiguous, description: "\(prefix)…\(suffix) matches \(matches.count) questions; give the whole id")
            }
            return matches[0]
        }
    }
}
