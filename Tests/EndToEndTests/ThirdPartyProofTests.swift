import Foundation
import PermissionLedger
import Testing

/// The ledger's checkpoints and proofs checked by an implementation that is not ours: Go's
/// `golang.org/x/mod/sumdb/note` and `sumdb/tlog`, from Debian's `golang-golang-x-mod-dev`, in the small verifier of
/// `Tools/ProofVerifier` (docs/spec/PROOFS.md).
@Suite("proofs checked by Go's sumdb/note and sumdb/tlog", .timeLimit(.minutes(10)))
struct ThirdPartyProofTests {
    @Test("every inclusion proof of every tree of 1 to 64 events, and at 1,000 and the head of family-day, is accepted")
    func inclusionProofs() throws {
        try withProvingLedger { sandbox, ledger, signer in
            var checks = try Checks(sandbox: sandbox, signer: signer)
            let head = try ledger.head().seq
            for size in Array(1...64) + [1000, head] {
                let checkpoint = try checks.checkpoint(ledger, size: size)
                for seq in 1...size {
                    checks.inclusion(try ledger.leafData(seq: seq), try ledger.inclusionProof(seq: seq, size: size), checkpoint.serialized)
                }
            }
            #expect(checks.count == 64 * 65 / 2 + 1000 + Int(head) + 66)
            try checks.run()
        }
    }

    @Test("every consistency proof between trees of up to 64 events, 1 → n and n → n, is accepted")
    func consistencyProofs() throws {
        try withProvingLedger { sandbox, ledger, signer in
            var checks = try Checks(sandbox: sandbox, signer: signer)
            let head = try ledger.head().seq
            var pairs = (1...64).flatMap { new in (1...new).map { (UInt64($0), UInt64(new)) } }
            for power in (0..<11).map({ UInt64(1) << $0 }) where power <= head { pairs += [(1, power), (power, power), (power, head)] }
            pairs += [(1, head), (head, head), (1000, head)]
            for (old, new) in pairs {
                let oldCheckpoint = try checks.checkpoint(ledger, size: old)
                let newCheckpoint = try checks.checkpoint(ledger, size: new)
                checks.consistency(old: oldCheckpoint.serialized, try ledger.consistencyProof(from: old, to: new), newCheckpoint.serialized)
            }
            try checks.run()
        }
    }

    @Test("one changed byte of a leaf, a proof, a root or a signature is refused")
    func tamperedProofsAreRefused() throws {
        try withProvingLedger { sandbox, ledger, signer in
            var checks = try Checks(sandbox: sandbox, signer: signer)
            for (seq, size) in [(1, 1), (5, 8), (13, 64), (64, 64), (700, 1200)] as [(UInt64, UInt64)] {
                let checkpoint = try checks.checkpoint(ledger, size: size)
                let leaf = try ledger.leafData(seq: seq)
                let proof = try ledger.inclusionProof(seq: seq, size: size)
                checks.inclusion(leaf, proof, checkpoint.serialized)
                var changedLeaf = leaf
                changedLeaf[changedLeaf.count / 2] ^= 1
                checks.inclusion(changedLeaf, proof, checkpoint.serialized, refused: "a leaf byte, \(seq) in \(size)")
                if !proof.hashes.isEmpty {
                    var changed = proof
                    changed.hashes[proof.hashes.count / 2] = flipped(proof.hashes[proof.hashes.count / 2])
                    checks.inclusion(leaf, changed, checkpoint.serialized, refused: "a proof byte, \(seq) in \(size)")
                }
                // A root changed and signed again: only the tree's check can refuse it.
                let wrongRoot = try checks.signed(Checkpoint(origin: checkpoint.checkpoint.origin, size: size, root: flipped(checkpoint.checkpoint.root)))
                checks.inclusion(leaf, proof, wrongRoot, refused: "a root byte, \(seq) in \(size)")
                checks.inclusion(leaf, proof, withChangedSignature(checkpoint.serialized), refused: "a signature byte, \(seq) in \(size)")
            }
            let old = try checks.checkpoint(ledger, size: 6)
            let new = try checks.checkpoint(ledger, size: 64)
            let proof = try ledger.consistencyProof(from: 6, to: 64)
            checks.consistency(old: old.serialized, proof, new.serialized)
            var changed = proof
            changed.hashes[1] = flipped(proof.hashes[1])
            checks.consistency(old: old.serialized, changed, new.serialized, refused: "a consistency proof byte")
            let wrongOld = try checks.signed(Checkpoint(origin: old.checkpoint.origin, size: 6, root: flipped(old.checkpoint.root)))
            checks.consistency(old: wrongOld, proof, new.serialized, refused: "an old root byte")
            checks.consistency(old: old.serialized, proof, withChangedSignature(new.serialized), refused: "a new signature byte")
            try checks.run()
        }
    }

    @Test("the tool's checkpoint, prove and prove-consistency, written to files, are accepted; their leaves are the API's")
    func toolOutputIsAccepted() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let key = sandbox.path("signing.key")
            let keygen = try sandbox.run(["keygen", "--origin", "example.com/family", "--out", key])
            try #require(keygen.status == 0, "\(keygen)")
            let vkey = try sandbox.write(keygen.out, to: "vkey")
            let signing = ["--ledger", ledger, "--signing-key", key]
            let checkpoint = try sandbox.run(["checkpoint", "--as-of", "seq:100"] + signing)
            let prove = try sandbox.run(["prove", "--seq", "42", "--size", "100"] + signing)
            let consistency = try sandbox.run(["prove-consistency", "--from", "100"] + signing)
            for run in [checkpoint, prove, consistency] { try #require(run.status == 0, "\(run)") }
            let leaf = try Ledger(path: ledger, options: .init(readOnly: true)).leafData(seq: 42)
            try Data(leaf).write(to: URL(fileURLWithPath: sandbox.path("42.leaf")))
            let files = [("checkpoint", checkpoint.out), ("42.proof", prove.out), ("consistency", consistency.out)]
            for (name, text) in files { try sandbox.write(text, to: name) }
            let verifier = try ProofVerifier.executable()
            for arguments in [
                ["note", "--vkey", vkey, sandbox.path("checkpoint")],
                ["inclusion", "--vkey", vkey, "--leaf", sandbox.path("42.leaf"), sandbox.path("42.proof")],
                ["consistency", "--vkey", vkey, "--old", sandbox.path("checkpoint"), sandbox.path("consistency")],
            ] {
                let run = try sandbox.run(arguments, program: verifier)
                #expect(run.status == 0 && run.out.hasPrefix("ok: "), "\(run)")
            }
        }
    }
}

/// Checks listed for one run of the Go verifier's `batch` command, each to be accepted, or refused.
private struct Checks {
    let sandbox: Sandbox
    let signer: CheckpointSigner
    let vkey: String
    /// The batch's lines, each with what it checks when it is to be refused (`nil`: to be accepted).
    private var lines: [(line: String, refused: String?)] = []
    private var checkpoints: [UInt64: SignedCheckpoint] = [:]
    private var files = 0

    init(sandbox: Sandbox, signer: CheckpointSigner) throws {
        self.sandbox = sandbox
        self.signer = signer
        vkey = try sandbox.write(signer.signer.verifierKey + "\n", to: "vkey")
    }

    var count: Int { lines.count }

    /// The signed checkpoint of `size` events, signed once, and checked as a note.
    mutating func checkpoint(_ ledger: Ledger, size: UInt64) throws -> SignedCheckpoint {
        if let known = checkpoints[size] { return known }
        let signed = try ledger.checkpoint(asOf: .seq(size), signer: signer)
        checkpoints[size] = signed
        lines.append(("note\t\(vkey)\t\(file(signed.serialized))", nil))
        return signed
    }

    /// `checkpoint` signed with the key as it is, whatever the ledger holds.
    func signed(_ checkpoint: Checkpoint) throws -> String { try signer.signer.sign(checkpoint.text).serialized }

    mutating func inclusion(_ leaf: [UInt8], _ proof: InclusionProof, _ checkpoint: String, refused: String? = nil) {
        let text = "c2sp.org/tlog-proof@v1\nindex \(proof.index)\n" + proof.hashes.map { $0.base64 + "\n" }.joined() + "\n" + checkpoint
        lines.append(("inclusion\t\(vkey)\t\(file(leaf))\t\(file(text))", refused))
    }

    mutating func consistency(old: String, _ proof: ConsistencyProof, _ new: String, refused: String? = nil) {
        let text = "old \(proof.oldSize)\n" + proof.hashes.map { $0.base64 + "\n" }.joined() + "\n" + new
        lines.append(("consistency\t\(vkey)\t\(file(old))\t\(file(text))", refused))
    }

    private mutating func file(_ text: String) -> String { file(Array(text.utf8)) }

    private mutating func file(_ bytes: [UInt8]) -> String {
        files += 1
        let path = sandbox.path("check-\(files)")
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    /// Runs every check listed, and expects each to be accepted or refused as it was listed.
    @discardableResult
    func run() throws -> [String] {
        let list = try sandbox.write(lines.map(\.line).joined(separator: "\n") + "\n", to: "checks")
        let run = try sandbox.run(["batch", list], program: try ProofVerifier.executable())
        try #require(run.status == 0, "\(run)")
        let verdicts = run.outLines
        try #require(verdicts.count == lines.count, "\(run)")
        for ((line, refused), verdict) in zip(lines, verdicts) {
            if let refused {
                #expect(verdict.hasPrefix("rejected: "), "changed \(refused), yet: \(verdict)")
            } else {
                #expect(verdict.hasPrefix("ok: "), "\(line): \(verdict)")
            }
        }
        return verdicts
    }
}

/// `note` with one byte of its signature changed (after the key ID), its base64 still canonical.
private func withChangedSignature(_ note: String) -> String {
    var lines = note.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let index = lines.lastIndex { $0.hasPrefix("— ") }!
    let parts = lines[index].split(separator: " ")
    var signature = [UInt8](Data(base64Encoded: String(parts[2]))!)
    signature[20] ^= 1
    lines[index] = "\(parts[0]) \(parts[1]) " + Data(signature).base64EncodedString()
    return lines.joined(separator: "\n")
}

/// A sandbox holding family-day (1,200 events), open read-only through the API, and a new signing key.
private func withProvingLedger(_ body: (Sandbox, Ledger, CheckpointSigner) throws -> Void) throws {
    try withSandbox { sandbox in
        let path = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
        let signer = try CheckpointSigner.create(keyFile: sandbox.path("signing.key"), origin: "example.com/family-day")
        try body(sandbox, try Ledger(path: path, options: .init(readOnly: true)), signer)
    }
}

private func flipped(_ hash: TreeHash) -> TreeHash {
    var bytes = hash.bytes
    bytes[9] ^= 0x40
    return TreeHash(bytes: bytes)!
}

/// The Go verifier of `Tools/ProofVerifier`, built once from Debian's packages by `Tools/proof-verifier.sh` (which
/// installs `golang-go` and `golang-golang-x-mod-dev` when they are missing) into `.build/proof-verifier`.
enum ProofVerifier {
    static func executable() throws -> URL { try built.get() }

    private static let built: Result<URL, any Error> = Result {
        let url = packageRoot.appendingPathComponent(".build/proof-verifier/proof-verifier")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("proof-verifier-build-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let child = try ChildProcess.start(
            "/bin/bash", [packageRoot.appendingPathComponent("Tools/proof-verifier.sh").path, url.path],
            environment: ProcessInfo.processInfo.environment, directory: packageRoot.path,
            stdin: FileHandle.nullDevice.fileDescriptor, stdout: output.fileDescriptor, stderr: output.fileDescriptor)
        let (status, _) = child.wait()
        guard status == 0, FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "Tools/proof-verifier.sh failed: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")"])
        }
        return url
    }
}
