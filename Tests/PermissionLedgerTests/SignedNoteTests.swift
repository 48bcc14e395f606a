import Foundation
@testable import PermissionLedger
import Testing

/// C2SP signed notes with Ed25519 keys: the example of Go's `golang.org/x/mod/sumdb/note` documentation (its key,
/// verifier key and signature) and C2SP `signed-note`'s own example, reproduced and checked.
@Suite struct SignedNoteTests {
    static let signerKey = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
    static let verifierKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    static let text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
    static let signatureLine = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"

    @Test func goNotesExampleKeyGivesItsVerifierKeyAndKeyID() throws {
        let signer = try NoteSigner(signerKey: Self.signerKey)
        #expect(signer.name == "PeterNeumann")
        #expect(signer.keyID == 0xc74f20a3)
        #expect(signer.verifierKey == Self.verifierKey)
        #expect(signer.signerKey == Self.signerKey)
        #expect(try NoteVerifier(verifierKey: Self.verifierKey).keyID == 0xc74f20a3)
    }

    #if os(Linux)
    /// Ed25519 as BoringSSL signs, deterministically (RFC 8032): the documented signature, byte for byte. (Apple's
    /// CryptoKit adds randomness to each signature, which stays valid but differs.)
    @Test func goNotesExampleIsSignedByteForByte() throws {
        let signer = try NoteSigner(signerKey: Self.signerKey)
        #expect(try SignedNote.sign(Self.text, by: signer).serialized == Self.text + "\n" + Self.signatureLine)
    }
    #endif

    @Test func goNotesExampleVerifiesAndAnyChangeIsRefused() throws {
        let verifier = try NoteVerifier(verifierKey: Self.verifierKey)
        let note = Self.text + "\n" + Self.signatureLine
        #expect(try SignedNote(parsing: note, verifier: verifier).text == Self.text)
        var changed = Array(note.utf8)
        changed[3] ^= 0x20
        #expect(throws: ProofError.self) { try SignedNote(parsing: String(decoding: changed, as: UTF8.self), verifier: verifier) }
        let otherKey = try NoteSigner.generate(name: "PeterNeumann").verifier
        #expect(throws: ProofError.self) { try SignedNote(parsing: note, verifier: otherKey) }
        #expect(throws: ProofError.self) { try SignedNote(parsing: String(note.dropLast()), verifier: verifier) }
    }

    @Test func c2spSignedNotesExampleVerifies() throws {
        let verifier = try NoteVerifier(verifierKey: "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k")
        let note = "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
        #expect(try SignedNote(parsing: note, verifier: verifier).text == "This is an example message.\n")
    }

    @Test func keysAndNamesThatAreNotValidAreRefused() throws {
        for name in ["", "a b", "a+b", "tab\there", "esc\u{1B}[31m", "bidi\u{202E}", "line\u{2028}"] {
            #expect(!NoteVerifier.isValidName(name), "\(name.debugDescription)")
            #expect(throws: ProofError.self) { try NoteSigner.generate(name: name) }
        }
        #expect(NoteVerifier.isValidName("example.com/family-ledger"))
        for key in ["", "PRIVATE+KEY+a+00000000+AAAA", Self.signerKey.replacingOccurrences(of: "c74f20a3", with: "c74f20a4"), Self.verifierKey] {
            #expect(throws: ProofError.self) { try NoteSigner(signerKey: key) }
        }
        for key in ["", "a+00000000", Self.verifierKey.replacingOccurrences(of: "c74f20a3", with: "00000000"), Self.signerKey] {
            #expect(throws: ProofError.self) { try NoteVerifier(verifierKey: key) }
        }
    }

    @Test func aCheckpointIsThreeLinesSignedAndParsesBack() throws {
        let signer = try NoteSigner.generate(name: "example.com/ledger")
        let root = TreeHash.leaf(Array("x".utf8))
        let signed = try Checkpoint(origin: "example.com/ledger", size: 42, root: root).signed(by: signer)
        let lines = signed.serialized.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 6)
        #expect(lines[0] == "example.com/ledger" && lines[1] == "42" && lines[2] == Substring(root.base64) && lines[3].isEmpty)
        #expect(lines[4].hasPrefix("— example.com/ledger ") && lines[5].isEmpty)
        let parsed = try SignedCheckpoint(parsing: signed.serialized, verifier: signer.verifier)
        #expect(parsed.checkpoint == signed.checkpoint)
        for bad in ["example.com/ledger\n042\n\(root.base64)\n", "example.com/ledger\n42\n\(root.base64.dropLast(2))\n", "other\n42\n\(root.base64)\n"] {
            let note = bad + "\n" + (try signer.signatureLine(bad))
            #expect(throws: ProofError.self) { try SignedCheckpoint(parsing: note, verifier: signer.verifier) }
        }
    }
}
