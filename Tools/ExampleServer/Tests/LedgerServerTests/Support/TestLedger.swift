import Foundation
import PermissionLedger
import PermissionLedgerTesting

/// A ledger in a directory of its own under the temporary directory, removed afterwards.
struct TestLedger {
    let directory: URL
    let ledger: Ledger

    var path: String { directory.appendingPathComponent("test.ledger").path }

    /// Runs `body` with a fresh, empty ledger, then closes and removes it. Its secrets come from the fixtures'
    /// seed, so that its hashes and digests are those of the fixtures' expected results.
    static func with<T>(_ body: (TestLedger) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-server-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ledger = try Ledger(path: directory.appendingPathComponent("test.ledger").path, options: Ledger.Options(mapSize: 16 << 20).seededForTests())
        let test = TestLedger(directory: directory, ledger: ledger)
        do {
            let result = try await body(test)
            await ledger.close()
            return result
        } catch {
            await ledger.close()
            throw error
        }
    }
}

/// The repository's fixtures (`Fixtures/`), found from this file's place in the repository.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../../../../../Fixtures").standardizedFileURL

    /// The text of fixture `name` (such as `time-limited.jsonl`).
    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }
}
