import ArgumentParser
import Foundation
import PermissionModel
import PermissionLedger

struct VerifyBundle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-bundle",
        abstract: "Check an audit bundle against a verifier key: exit 0 when everything holds, 4 naming the first failure.",
        discussion: """
        Checks the signed checkpoint, every event's inclusion proof against it, that each event is what its leaf \
        commits to (personal values through their commitment), and that no event of the subject is missing \
        between the first and the last. Give the verifier key you trust, not the bundle's own copy.

        Example:
          permission-ledger verify-bundle kid-ben-audit --vkey trusted.vkey
        """)

    @Argument(help: ArgumentHelp("The bundle's directory.", valueName: "DIR")) var directory: String
    @Option(help: ArgumentHelp("A file holding the verifier key (ORIGIN+KEYID+KEY).", valueName: "VKEY")) var vkey: String
    @OptionGroup var format: FormatOption

    func run() throws {
        // A verifier key is one line of some 100 bytes; a FIFO, a device or a huge file in its place is refused.
        let data: [UInt8]
        do throws(WholeFile.Problem) {
            data = try WholeFile.read(vkey, limit: 4096)
        } catch {
            let why = switch error {
            case .unreadable: "cannot be read"
            case .notARegularFile: "is not a regular file"
            case .tooLarge(let size): "is \(size) bytes long, not a verifier key"
            case .changed: "changed while it was read"
            }
            throw ToolFailure(.unreadable, "--vkey \(quoted(vkey)): \(why)")
        }
        let verifier: NoteVerifier
        do {
            verifier = try NoteVerifier(verifierKey: String(decoding: data, as: UTF8.self))
        } catch {
            // A file that holds no verifier key is an answer about that file, as for any damaged file.
            throw ToolFailure(.unreadable, "--vkey \(quoted(vkey)): \(error.description)")
        }
        let summary: AuditBundle.Summary
        do {
            summary = try AuditBundle.verify(directory, verifier: verifier)
        } catch {
            throw ToolFailure(.damaged, "\(displayed(directory)): \(displayed(error.description))")
        }
        switch format.resolved {
        case .table:
            try writeOut("ok: \(summary.seqs.count) events (seq \(summary.seqs.first!) to \(summary.seqs.last!)) in the tree of \(summary.checkpoint.size) events signed by \(summary.checkpoint.origin)")
        case .json:
            var json = JSONObjectWriter()
            json.bool("ok", true)
            json.integer("events", summary.seqs.count)
            json.integer("size", summary.checkpoint.size)
            json.string("origin", summary.checkpoint.origin)
            json.string("root", summary.checkpoint.root.base64)
            try writeOut(json.text)
        case .csv:
            var table = Table("ok", "events", "size", "origin", "root")
            table.add("true", String(summary.seqs.count), String(summary.checkpoint.size), summary.checkpoint.origin, summary.checkpoint.root.base64)
            try writeOut(table.csv(), terminator: "")
        }
    }
}
