import Foundation
internal import LMDB
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One child's audit bundle (docs/spec/PROOFS.md, `bundle`): everything an auditor needs to check, with tools that
/// are not PermissionLedger's, that the subject's events are exactly what the ledger recorded, and nothing of any
/// other subject.
///
/// ```
/// DIR/README.md            how to check it, with third-party tools
/// DIR/vkey                 the verifier key, one line
/// DIR/checkpoint           the signed checkpoint the proofs are against
/// DIR/events/SEQ.json      each event's readable JSON line, as `export` writes it
/// DIR/events/SEQ.leaf      its leaf data (docs/STORAGE.md, "Leaf data")
/// DIR/events/SEQ.proof     its C2SP tlog-proof against DIR/checkpoint
/// DIR/check-proofs.go      the signature and the proofs, checked with Go's sumdb/note and sumdb/tlog
/// DIR/check-leaves.py      each event against its leaf, and no event missing, with Python's standard library
/// ```
///
/// The bundle holds the subject's personal values: its directory is made with mode 0700, its files 0600.
public enum AuditBundle {
    /// What a bundle holds.
    public struct Summary: Hashable, Sendable {
        /// The checkpoint its proofs are against.
        public var checkpoint: Checkpoint
        /// The seqs of the subject's events it holds, in log order.
        public var seqs: [UInt64]
    }

    /// Writes the bundle of `subject`'s events up to `asOf` (default: the head) into `directory`, which must not
    /// exist or be empty, with the checkpoint `signer` signs.
    ///
    /// - Throws: ``LedgerError``: `.notFound` when the subject has no event by then; `.keyUnavailable` when the
    ///   ledger's key, which the readable events need, is not there; `.storage` when a file cannot be written.
    public static func write(
        _ ledger: Ledger, subject: String, asOf: AsOf? = nil, signer: CheckpointSigner, to directory: String
    ) throws -> Summary {
        let signed = try ledger.checkpoint(asOf: try asOf ?? .seq(ledger.head().seq), signer: signer)
        let size = signed.checkpoint.size
        var files: [(name: String, bytes: [UInt8])] = [
            ("vkey", Array((signer.signer.verifierKey + "\n").utf8)),
            ("checkpoint", Array(signed.serialized.utf8)),
            ("check-proofs.go", Array(BundleChecks.proofs.utf8)),
            ("check-leaves.py", Array(BundleChecks.leaves.utf8)),
        ]
        // Collected in the read, which is run again after an erasure recorded meanwhile: each run starts afresh.
        let (seqs, eventFiles) = try ledger.read(asOf: .seq(size), retries: Ledger.readRetries) { view in
            var seqs: [UInt64] = []
            var files: [(name: String, bytes: [UInt8])] = []
            try view.history(subject: subject, toSeq: size) { recorded in
                let seq = recorded.seq
                seqs.append(seq)
                files.append(("events/\(seq).json", Array((EventJSON.encode(recorded) + "\n").utf8)))
                files.append(("events/\(seq).leaf", try view.leafData(seq: seq)))
                files.append(("events/\(seq).proof", Array(try view.inclusionProof(seq: seq).tlogProof(checkpoint: signed).utf8)))
            }
            return (seqs, files)
        }
        files += eventFiles
        guard !seqs.isEmpty else {
            throw LedgerError(.notFound, "the subject \(quotedSubject(subject)) has no event in the tree of \(size) events")
        }
        files.append(("README.md", Array(BundleReadme.text(subject: subject, checkpoint: signed.checkpoint, seqs: seqs).utf8)))
        try writeFiles(files, to: directory)
        return Summary(checkpoint: signed.checkpoint, seqs: seqs)
    }

    /// Makes `directory` (mode 0700; an existing one must be empty) and writes each file in it (mode 0600, never
    /// over an existing file, never through a symbolic link).
    private static func writeFiles(_ files: [(name: String, bytes: [UInt8])], to directory: String) throws {
        func failure(_ path: String, _ what: String, _ code: Int32 = errno) -> LedgerError {
            LedgerError(.storage, "\(path): cannot be \(what): \(String(cString: strerror(code)))")
        }
        do throws(OwnerOnlyDirectory.Problem) {
            try OwnerOnlyDirectory.makeNewOrEmpty(directory)
        } catch .notEmpty {
            throw LedgerError(.storage, "\(directory): is not empty; a bundle is written into a new or empty directory")
        } catch .cannotBeMade(let reason) {
            throw LedgerError(.storage, "\(directory): cannot be made: \(reason)")
        }
        guard mkdir(directory + "/events", 0o700) == 0 else { throw failure(directory + "/events", "made") }
        for (name, bytes) in files {
            let path = directory + "/" + name
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw failure(path, "created") }
            defer { close(fd) }
            if let code = WholeFile.write(bytes, to: fd) { throw failure(path, "written", code) }
        }
    }

    private static func quotedSubject(_ subject: String) -> String { "\"\(subject)\"" }
}
