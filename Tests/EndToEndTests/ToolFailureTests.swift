import Foundation
import PermissionLedger
@testable import permission_ledger
import Testing

/// The engine's remedies, worded as the tool's commands (docs/spec/CLI.md, "Exit codes"): the lines the tool
/// prints for a ledger error are those it printed when the engine spelled the command out itself.
@Suite("the tool's words for a ledger error")
struct ToolFailureTests {
    @Test("a failed disk: run `permission-ledger verify`, exit 3")
    func diskFailure() {
        let failure = ToolFailure(LedgerError(
            .storage, "/l: an input/output error (EIO): the disk failed a read or a write", remedy: .verify(path: "/l")))
        #expect(failure.code == .unreadable)
        #expect(failure.lines == ["/l: an input/output error (EIO): the disk failed a read or a write; run `permission-ledger verify`"])
    }

    @Test("indexes an older build made: the rebuild command with the ledger's path, exit 3")
    func olderIndexes() {
        let failure = ToolFailure(LedgerError(
            .notALedger, "/l: the ledger's indexes were made by an older PermissionLedger", remedy: .rebuildProjections(path: "/l")))
        #expect(failure.code == .unreadable)
        #expect(failure.lines == [
            "/l: the ledger's indexes were made by an older PermissionLedger; rebuild them once with 'permission-ledger rebuild --ledger /l' (the log itself is unchanged)"
        ])
    }

    @Test("damage met by a command other than verify: the seq leads, the pointer to verify follows")
    func damage() {
        let failure = ToolFailure(LedgerError(.damaged, "the stored event is cut short", seq: 3))
        #expect(failure.code == .unreadable)
        #expect(failure.lines == ["seq 3: the stored event is cut short (run permission-ledger verify for a full check)"])
    }

    @Test("a backup whose copy failed on a failing disk: exit 6, and the remedy is the tool's verify command")
    func backupStorageFailure() {
        let failure = Backup.failure(LedgerError(
            .storage, "/l: an input/output error (EIO): the disk failed a read or a write", remedy: .verify(path: "/l")))
        #expect(failure.code == .outputFailed)
        #expect(failure.code.rawValue == 6)
        #expect(failure.lines == ["/l: an input/output error (EIO): the disk failed a read or a write; run `permission-ledger verify`"])
    }

    @Test("a backup that failed for the ledger's sake (damage) keeps the ledger's exit code")
    func backupDamage() {
        let failure = Backup.failure(LedgerError(.damaged, "the backup failed verification: a hash differs", seq: 3))
        #expect(failure.code == .unreadable)
    }

    @Test("standard output that cannot be written: exit 6, one line naming standard output and why",
          arguments: [
              (ENOSPC, "standard output: no space left on the device; the output could not be written"),
              (EFBIG, "standard output: the file reached this process's file size limit (ulimit -f); the output could not be written"),
              (EIO, "standard output: an input/output error; the output could not be written"),
          ])
    func outputFailed(_ code: Int32, _ line: String) {
        let failure = ToolFailure.outputFailed(errno: code)
        #expect(failure.code.rawValue == 6)
        #expect(failure.lines == [line])
    }
}
