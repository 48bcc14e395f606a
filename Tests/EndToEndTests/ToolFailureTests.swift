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
}
