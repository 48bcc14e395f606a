import Foundation
import PermissionModel

/// The `require` parameter of `permissions`: names separated by commas, parsed as the tool's `--require`.
enum RequiredPermissions {
    /// The permissions named, in order, each once.
    ///
    /// - Throws: ``APIError`` 400 for an empty name (`camera,,microphone`, a trailing comma) or one that is
    ///   not a permission.
    static func parse(_ text: String) throws(APIError) -> [SystemPermission] {
        var seen = Set<SystemPermission>()
        var permissions: [SystemPermission] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else {
                throw .badRequest("require: an empty permission name in \(quoted(text)); give names separated by single commas, such as camera,microphone")
            }
            guard let permission = SystemPermission(rawValue: trimmed) else {
                throw .badRequest("require: \(quoted(trimmed)) is not a permission; expected some of \(SystemPermission.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if seen.insert(permission).inserted { permissions.append(permission) }
        }
        return permissions
    }
}
