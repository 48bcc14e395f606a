import Foundation
import PermissionModel

/// The versioned projection tables.
enum VersionedTable: CaseIterable {
    case questions, handles, permissions
}
