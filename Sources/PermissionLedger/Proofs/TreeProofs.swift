import Foundation

/// That an event is in the tree of some size: RFC 9162's inclusion proof, as C2SP `tlog-proof` writes it.
public struct InclusionProof: Hashable, Sendable {
    /// The leaf's index: the event's `seq` − 1.
    public var index: UInt64
    /// The size of the tree it is proved in.
    public var size: UInt64
    /// The proof's hashes, from the leaf's sibling up to the root's child.
    public var hashes: [TreeHash]

    /// The proof of leaf `index` in the tree of `size` leaves, made of `hashes`.
    public init(index: UInt64, size: UInt64, hashes: [TreeHash]) {
        self.index = index
        self.size = size
        self.hashes = hashes
    }

    /// The C2SP `tlog-proof`: `c2sp.org/tlog-proof@v1`, `index N`, one base64 hash per line, a blank line, and the
    /// signed checkpoint of the proof's size.
    public func tlogProof(checkpoint: SignedCheckpoint) -> String {
        precondition(checkpoint.checkpoint.size == size, "a tlog-proof ends with the checkpoint of its own size")
        return Self.header + "\nindex \(index)\n" + hashes.map { $0.base64 + "\n" }.joined() + "\n" + checkpoint.serialized
    }

    static let header = "c2sp.org/tlog-proof@v1"

    /// Whether the proof shows that the leaf of data `leafData` is in the tree `checkpoint` names.
    public func verifies(leafData: some DataProtocol, checkpoint: Checkpoint) -> Bool {
        size == checkpoint.size
            && ProofCheck.inclusion(leaf: .leaf(leafData), index: index, size: size, proof: hashes, root: checkpoint.root)
    }

    /// Parses a C2SP `tlog-proof` and its checkpoint, checked as signed by `verifier`. An `extra` line is read
    /// and ignored.
    ///
    /// - Throws: ``ProofError`` naming the first thing that is not as the format says.
    public static func parse(tlogProof text: String, verifier: NoteVerifier) throws(ProofError) -> (proof: InclusionProof, checkpoint: SignedCheckpoint) {
        guard let split = text.range(of: "\n\n") else { throw ProofError("the proof has no blank line before its checkpoint") }
        var lines = text[..<split.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)[...]
        guard lines.first == Substring(header) else { throw ProofError("the proof does not start with \(header)") }
        lines = lines.dropFirst()
        if let extra = lines.first, extra.hasPrefix("extra ") { lines = lines.dropFirst() }
        guard let indexLine = lines.first, indexLine.hasPrefix("index "),
              let index = UInt64(indexLine.dropFirst(6)), String(index) == indexLine.dropFirst(6) else {
            throw ProofError("the proof has no `index N` line")
        }
        let hashes = try parseHashes(lines.dropFirst(), what: "proof")
        let checkpoint = try SignedCheckpoint(parsing: String(text[split.upperBound...]), verifier: verifier)
        guard index < checkpoint.checkpoint.size else {
            throw ProofError("the proof's index \(index) is not in the checkpoint's tree of \(checkpoint.checkpoint.size)")
        }
        return (InclusionProof(index: index, size: checkpoint.checkpoint.size, hashes: hashes), checkpoint)
    }
}

/// That the tree of one size extends the tree of a smaller one: RFC 9162's consistency proof, as the body of a C2SP
/// `tlog-witness` `add-checkpoint` request writes it.
public struct ConsistencyProof: Hashable, Sendable {
    /// The size of the older tree.
    public var oldSize: UInt64
    /// The size of the newer tree.
    public var newSize: UInt64
    /// The proof's hashes (none when the old tree is empty or the same tree).
    public var hashes: [TreeHash]

    /// The proof that the tree of `newSize` leaves extends the tree of `oldSize`, made of `hashes`.
    public init(oldSize: UInt64, newSize: UInt64, hashes: [TreeHash]) {
        self.oldSize = oldSize
        self.newSize = newSize
        self.hashes = hashes
    }

    /// `old M`, one base64 hash per line, a blank line, and the signed checkpoint of the newer tree.
    public func witnessBody(checkpoint: SignedCheckpoint) -> String {
        precondition(checkpoint.checkpoint.size == newSize, "a consistency proof ends with the checkpoint of its newer tree")
        return "old \(oldSize)\n" + hashes.map { $0.base64 + "\n" }.joined() + "\n" + checkpoint.serialized
    }

    /// Whether the proof shows that the tree of `new` extends the tree of `old`.
    public func verifies(old: Checkpoint, new: Checkpoint) -> Bool {
        oldSize == old.size && newSize == new.size
            && ProofCheck.consistency(oldSize: old.size, oldRoot: old.root, newSize: new.size, newRoot: new.root, proof: hashes)
    }

    /// Parses the body of a `tlog-witness` `add-checkpoint` request and its checkpoint, checked as signed by `verifier`.
    ///
    /// - Throws: ``ProofError`` naming the first thing that is not as the format says.
    public static func parse(witnessBody text: String, verifier: NoteVerifier) throws(ProofError) -> (proof: ConsistencyProof, checkpoint: SignedCheckpoint) {
        guard let split = text.range(of: "\n\n") else { throw ProofError("the proof has no blank line before its checkpoint") }
        let lines = text[..<split.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        guard let oldLine = lines.first, oldLine.hasPrefix("old "),
              let oldSize = UInt64(oldLine.dropFirst(4)), String(oldSize) == oldLine.dropFirst(4) else {
            throw ProofError("the proof does not start with an `old N` line")
        }
        let hashes = try InclusionProof.parseHashes(lines.dropFirst(), what: "consistency proof")
        let checkpoint = try SignedCheckpoint(parsing: String(text[split.upperBound...]), verifier: verifier)
        guard oldSize <= checkpoint.checkpoint.size else {
            throw ProofError("the proof's old size \(oldSize) is larger than its checkpoint's \(checkpoint.checkpoint.size)")
        }
        return (ConsistencyProof(oldSize: oldSize, newSize: checkpoint.checkpoint.size, hashes: hashes), checkpoint)
    }
}

extension InclusionProof {
    /// Hash lines: each the base64 of 32 bytes. At most 63, as a tree of up to 2^63 leaves needs.
    static func parseHashes(_ lines: some Collection<Substring>, what: String) throws(ProofError) -> [TreeHash] {
        guard lines.count <= 63 else { throw ProofError("the \(what) has \(lines.count) hashes, more than any tree needs") }
        var hashes: [TreeHash] = []
        for (number, line) in lines.enumerated() {
            guard let hash = TreeHash(base64: line) else { throw ProofError("the \(what)'s hash \(number + 1) is not the base64 of 32 bytes") }
            hashes.append(hash)
        }
        return hashes
    }
}
