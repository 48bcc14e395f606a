import Foundation
import PermissionModel
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A log's signing key, read from its file, with the record of the largest checkpoint the key has signed: what keeps
/// the key from ever signing two checkpoints of one size with different roots.
///
/// The key file (mode 0600) holds the key's text form (``NoteSigner/signerKey``), as Go's `note` package reads it.
/// Beside it, `FILE.signed` (mode 0600) holds the largest checkpoint signed with it. Before the key signs a
/// checkpoint, the ledger proves, from its own tree, that the new checkpoint and the recorded one are of one history
/// (a consistency proof from the smaller tree to the larger, checked against both roots); a checkpoint of a larger
/// tree is recorded, flushed, before its signature is returned. The key file is locked (`flock`) meanwhile, so that
/// processes that share the key sign one after the other. A ledger restored from an older backup and grown again, or
/// another ledger given the same key, is refused instead of signed.
public final class CheckpointSigner: Sendable {
    /// The key file's path.
    public let keyFile: String
    /// The key.
    public let signer: NoteSigner

    /// Reads the signing key in `keyFile`.
    ///
    /// - Throws: ``LedgerError`` (`.keyUnavailable`) when the file is missing, is not the owner's alone (mode
    ///   0600), or does not hold a signing key.
    public init(keyFile: String) throws(LedgerError) {
        let text: [UInt8]
        do throws(OwnerOnlyFile.Problem) {
            // A signer writes the record of what it signed beside its key: it removes the name a creation killed
            // midway left to the key, which would otherwise keep the key when the file is deleted.
            guard let fd = try OwnerOnlyFile.openExisting(keyFile, writable: false, removingLeftover: true) else {
                throw OwnerOnlyFile.Problem(path: keyFile, reason: "no such file")
            }
            defer { close(fd) }
            text = try OwnerOnlyFile.read(fd, path: keyFile, limit: 4096)
        } catch {
            throw LedgerError(.keyUnavailable, "signing key \(error.description)")
        }
        do {
            signer = try NoteSigner(signerKey: String(decoding: text, as: UTF8.self))
        } catch {
            throw LedgerError(.keyUnavailable, "signing key \(keyFile): \(error.description)")
        }
        self.keyFile = keyFile
    }

    /// Makes a new signing key named `origin` and writes it to `keyFile` (mode 0600), which must not exist.
    ///
    /// - Throws: ``LedgerError`` (`.keyUnavailable`) when the file exists or cannot be written, or when `origin`
    ///   is not a valid key name.
    public static func create(keyFile: String, origin: String) throws(LedgerError) -> CheckpointSigner {
        let signer: NoteSigner
        do {
            signer = try NoteSigner.generate(name: origin)
        } catch {
            throw LedgerError(.keyUnavailable, "signing key: \(error.description)")
        }
        do throws(OwnerOnlyFile.Problem) {
            guard try OwnerOnlyFile.create(keyFile, contents: Array((signer.signerKey + "\n").utf8)) else {
                throw OwnerOnlyFile.Problem(path: keyFile, reason: "already exists; a signing key is never overwritten")
            }
        } catch {
            throw LedgerError(.keyUnavailable, "signing key \(error.description)")
        }
        return try CheckpointSigner(keyFile: keyFile)
    }

    /// Where the largest checkpoint signed with the key is recorded.
    public var recordFile: String { keyFile + ".signed" }

    /// Signs the checkpoint of the tree up to `view`'s point, once it is proved of one history with the largest
    /// checkpoint the key signed.
    func sign(_ view: LedgerView) throws -> SignedCheckpoint {
        let (size, root) = try view.treeHead()
        let checkpoint = Checkpoint(origin: signer.name, size: size, root: root)
        return try locked {
            let recorded = try readRecord()
            if let last = recorded?.checkpoint {
                try checkOneHistory(checkpoint, last, view)
            }
            let signed = try checkpoint.signed(by: signer)
            if size > recorded?.checkpoint.size ?? 0 || recorded == nil { try writeRecord(signed) }
            return signed
        }
    }

    /// Throws unless `new` and `last` (the largest checkpoint signed) are of one history, as `view`'s tree proves.
    private func checkOneHistory(_ new: Checkpoint, _ last: Checkpoint, _ view: LedgerView) throws {
        let refusal = "the signing key \(keyFile) signed a checkpoint of \(last.size) events (\(recordFile))"
        guard last.size <= view.head.seq else {
            throw LedgerError(.damaged, "\(refusal), but this ledger holds \(view.head.seq): it is another ledger's key, or the ledger was restored from an older backup; refusing to sign")
        }
        let (old, newer) = new.size <= last.size ? (new, last) : (last, new)
        let proof = try view.consistencyProof(oldSize: old.size, newSize: newer.size)
        guard ProofCheck.consistency(oldSize: old.size, oldRoot: old.root, newSize: newer.size, newRoot: newer.root, proof: proof) else {
            throw LedgerError(.damaged, "\(refusal) that this ledger's tree does not extend: another history under the same key; refusing to sign")
        }
    }

    private func readRecord() throws(LedgerError) -> SignedCheckpoint? {
        let bytes: [UInt8]
        do throws(OwnerOnlyFile.Problem) {
            guard let fd = try OwnerOnlyFile.openExisting(recordFile, writable: false) else { return nil }
            defer { close(fd) }
            bytes = try OwnerOnlyFile.read(fd, path: recordFile, limit: 64 * 1024)
        } catch {
            throw LedgerError(.keyUnavailable, "signing record \(error.description)")
        }
        do {
            return try SignedCheckpoint(parsing: String(decoding: bytes, as: UTF8.self), verifier: signer.verifier)
        } catch {
            throw LedgerError(.damaged, "signing record \(recordFile): not a checkpoint signed by this key (\(error.description))")
        }
    }

    /// Replaces the record with `signed`, flushed: written under a temporary name, then renamed over it.
    private func writeRecord(_ signed: SignedCheckpoint) throws(LedgerError) {
        let temporary = recordFile + ".tmp-\(getpid())"
        unlink(temporary)
        do throws(OwnerOnlyFile.Problem) {
            guard try OwnerOnlyFile.create(temporary, contents: Array(signed.serialized.utf8)) else {
                throw OwnerOnlyFile.Problem(path: temporary, reason: "already exists")
            }
        } catch {
            throw LedgerError(.storage, "signing record \(error.description)")
        }
        guard rename(temporary, recordFile) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw LedgerError(.storage, "signing record \(recordFile): cannot be written: \(reason)")
        }
        OwnerOnlyFile.syncDirectory(of: recordFile)
    }

    /// Runs `body` holding the key file's lock, exclusively.
    private func locked<T>(_ body: () throws -> T) throws -> T {
        let fd = open(keyFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw LedgerError(.keyUnavailable, "signing key \(keyFile): cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw LedgerError(.storage, "signing key \(keyFile): cannot be locked: \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
