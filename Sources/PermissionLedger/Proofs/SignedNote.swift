import Foundation

/// A C2SP `signed-note`: a text that ends with a newline, a blank line, then one signature line per signer
/// (`— NAME BASE64(KEYID ‖ SIGNATURE)`).
public struct SignedNote: Hashable, Sendable {
    /// The note's text, its final newline included.
    public let text: String
    /// The signature lines, each as written, newline included.
    public let signatureLines: [String]

    /// The whole note: text, blank line, signature lines.
    public var serialized: String { text + "\n" + signatureLines.joined() }

    /// `text` signed by `signer`.
    static func sign(_ text: String, by signer: NoteSigner) throws(LedgerError) -> SignedNote {
        precondition(text.hasSuffix("\n") && !text.contains("\n\n"), "a note's text ends with a newline and has no blank line")
        return SignedNote(text: text, signatureLines: [try signer.signatureLine(text)])
    }

    private init(text: String, signatureLines: [String]) {
        self.text = text
        self.signatureLines = signatureLines
    }

    /// Parses a signed note and checks that `verifier` signed it (other signers' lines are kept, not checked).
    ///
    /// - Throws: ``ProofError`` naming what does not hold: the form, or the signature.
    public init(parsing note: String, verifier: NoteVerifier) throws(ProofError) {
        guard note.hasSuffix("\n") else { throw ProofError("the signed note does not end with a newline") }
        guard let split = note.range(of: "\n\n", options: .backwards) else {
            throw ProofError("the signed note has no blank line before its signatures")
        }
        let text = String(note[..<split.lowerBound]) + "\n"
        let signatures = note[split.upperBound...]
        var lines: [String] = []
        var signed = false
        for line in signatures.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            guard line.hasPrefix("— ") else { throw ProofError("a signature line does not start with an em dash and a space") }
            let parts = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2, NoteVerifier.isValidName(String(parts[0])),
                  let bytes = Data(base64Encoded: String(parts[1])), bytes.count >= 5 else {
                throw ProofError("a signature line is not `— NAME SIGNATURE`")
            }
            if String(parts[0]) == verifier.name, Array(bytes.prefix(4)) == NoteVerifier.bigEndian(verifier.keyID) {
                guard verifier.isValidSignature(Array(bytes), of: text) else {
                    throw ProofError("the signature of \(verifier.name) does not verify")
                }
                signed = true
            }
            lines.append(line + "\n")
        }
        guard !lines.isEmpty else { throw ProofError("the signed note has no signature line") }
        guard signed else { throw ProofError("the note is not signed by \(verifier.name)+\(NoteVerifier.hexKeyID(verifier.keyID))") }
        self.init(text: text, signatureLines: lines)
    }
}

/// Why a key, a checkpoint, a proof or a bundle is not valid, in plain words: what an auditor reads.
public struct ProofError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What does not hold, and where, in plain words.
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
