import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct BundleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Write one child's audit bundle: its events, their proofs and a signed checkpoint.",
        discussion: """
        Writes into DIR (new, or empty): README.md (how to check it with third-party tools), vkey, checkpoint, \
        and for each of the subject's events up to --as-of (default: the head) events/SEQ.json (its readable \
        line, as export writes it), events/SEQ.leaf (its leaf data) and events/SEQ.proof (a C2SP tlog-proof), \
        with check-proofs.go and check-leaves.py. It holds nothing of any other child. Its files hold the child's \
        personal values: the directory is made with mode 0700.

        Example:
          permission-ledger bundle --ledger family.ledger --signing-key signing.key --subject kid-ben --out kid-ben-audit
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The subject whose events the bundle holds.", valueName: "SUBJECT")) var subject: String
    @Option(help: ArgumentHelp("The directory to write (new, or empty).", valueName: "DIR")) var out: String
    @OptionGroup var asOf: AsOfHeadOption
    @OptionGroup var signingKey: SigningKeyOption
    @OptionGroup var format: FormatOption

    func validate() throws {
        if out.isEmpty { throw ValidationError("--out: an empty path") }
        if subject.isEmpty { throw ValidationError("--subject: an empty subject") }
    }

    func run() throws {
        try ledger.refuseOutputInsideLedger(out, option: "--out")
        let signer = try signingKey.signer()
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let summary: AuditBundle.Summary
        do {
            summary = try AuditBundle.write(opened, subject: subject, asOf: point, signer: signer, to: out)
        } catch {
            throw ToolFailure(error)
        }
        switch format.resolved {
        case .table:
            try writeOut("wrote \(displayed(out)): \(summary.seqs.count) events of \(displayed(subject)) (seq \(summary.seqs.first!) to \(summary.seqs.last!)) and their proofs against the checkpoint of \(summary.checkpoint.size) events")
        case .json:
            var json = JSONObjectWriter()
            json.string("directory", out)
            json.string("subject", subject)
            json.integer("events", summary.seqs.count)
            json.integer("firstSeq", summary.seqs.first!)
            json.integer("lastSeq", summary.seqs.last!)
            json.integer("size", summary.checkpoint.size)
            json.string("root", summary.checkpoint.root.base64)
            try writeOut(json.text)
        case .csv:
            var table = Table("directory", "subject", "events", "firstSeq", "lastSeq", "size", "root")
            table.add(out, subject, String(summary.seqs.count), String(summary.seqs.first!), String(summary.seqs.last!),
                      String(summary.checkpoint.size), summary.checkpoint.root.base64)
            try writeOut(table.csv(), terminator: "")
        }
    }
}
