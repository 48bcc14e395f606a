import Foundation
import PermissionLedger
import PermissionModel

/// A question id as the tool takes it: a whole UUID, or an abbreviation of its first and last groups
/// (`6A3F1C2E…000000000001`, also with `...`), resolved against the questions asked by the point.
enum QuestionReference {
    case id(UUID)
    case abbreviated(prefix: String, suffix: String)

    init(parsing text: String) throws(APIError) {
        if text.utf8.count == 36, let id = UUID(uuidString: text) {
            self = .id(id)
            return
        }
        let parts = text.replacingOccurrences(of: "...", with: "…").split(separator: "…", omittingEmptySubsequences: false)
        let hex = CharacterSet(charactersIn: "0123456789abcdefABCDEF-")
        guard parts.count == 2, parts.allSatisfy({ $0.unicodeScalars.allSatisfy(hex.contains) }), parts[0].count + parts[1].count >= 8 else {
            throw .badRequest("\(quoted(text)) is not a question id (a UUID such as 6A3F1C2E-0000-4000-8000-000000000001, or an abbreviation such as 6A3F1C2E…000000000001: its first and last groups)")
        }
        self = .abbreviated(prefix: parts[0].uppercased(), suffix: parts[1].uppercased())
    }

    /// The question's id: an abbreviation must match exactly one question asked by the view's point
    /// (404 for none, 400 for several).
    func resolve(in view: LedgerView) throws -> UUID {
        switch self {
        case .id(let id):
            return id
        case .abbreviated(let prefix, let suffix):
            let matches = try view.questions().map(\.question.id).filter {
                $0.uuidString.hasPrefix(prefix) && $0.uuidString.hasSuffix(suffix)
            }
            guard matches.count == 1 else {
                throw matches.isEmpty
                    ? APIError.notFound("no question matches \(prefix)…\(suffix) as of seq \(view.point.seq)")
                    : APIError.badRequest("\(prefix)…\(suffix) matches \(matches.count) questions; give the whole id")
            }
            return matches[0]
        }
    }
}
