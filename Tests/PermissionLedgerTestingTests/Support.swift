import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// The fixture library in `Fixtures/` at the package root, found from this file's path.
enum Fixtures {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // PermissionLedgerTestingTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("Fixtures")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
}

/// The time a scenario starts at in these tests.
let nine = try! Timestamp(rfc3339: "2026-11-20T09:00:00Z")

func time(_ text: String) -> Timestamp { try! Timestamp(rfc3339: text) }

/// The recorded issue's comments, joined.
func message(_ issue: Issue) -> String {
    issue.comments.map(\.rawValue).joined(separator: "\n")
}

/// Whether one line of the issue's message holds `expected` and, to its right, `actual`: side by side.
func showsSideBySide(_ issue: Issue, expected: String, actual: String) -> Bool {
    message(issue).split(separator: "\n").contains { line in
        guard let e = line.range(of: expected) else { return false }
        return line[e.upperBound...].contains(actual)
    }
}
