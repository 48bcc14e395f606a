import Foundation

extension AuditBundle {
    /// Checks the bundle in `directory` against the verifier key `verifier` (the auditor's own copy): the signed
    /// checkpoint, each event's inclusion proof against it, that each event is what its leaf commits to (personal
    /// values through their commitment), and that each leaf names the subject's event before it in the bundle.
    ///
    /// - Returns: what the bundle holds, once everything holds.
    /// - Throws: ``ProofError`` naming the first thing that does not hold, and the file it is in.
    public static func verify(_ directory: String, verifier: NoteVerifier) throws(ProofError) -> Summary {
        let checkpointText = try text(directory, "checkpoint")
        let checkpoint = try SignedCheckpoint(parsing: checkpointText, verifier: verifier).checkpoint
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory + "/events")
        } catch {
            throw ProofError("\(directory)/events: cannot be read")
        }
        var seqs: [UInt64] = []
        for name in names {
            guard let dot = name.lastIndex(of: "."), let seq = UInt64(name[..<dot]), String(seq) == name[..<dot], seq > 0,
                  ["json", "leaf", "proof"].contains(name[name.index(after: dot)...]) else {
                throw ProofError("events/\(name): not a file a bundle holds (SEQ.json, SEQ.leaf, SEQ.proof)")
            }
            if name.hasSuffix(".json") { seqs.append(seq) }
        }
        seqs.sort()
        guard !seqs.isEmpty else { throw ProofError("events: the bundle holds no event") }
        guard names.count == 3 * seqs.count else { throw ProofError("events: not every event has its .json, .leaf and .proof") }
        var previous: UInt64?
        var subject: String?
        for seq in seqs {
            let where_ = "events/\(seq)"
            let leaf = try bytes(directory, "\(where_).leaf")
            let (proof, proofCheckpoint) = try InclusionProof.parse(tlogProof: try text(directory, "\(where_).proof"), verifier: verifier)
            guard proofCheckpoint.checkpoint == checkpoint else { throw ProofError("\(where_).proof: is not against the bundle's checkpoint") }
            guard proof.index == seq - 1 else { throw ProofError("\(where_).proof: proves index \(proof.index), not \(seq - 1)") }
            guard proof.verifies(leafData: leaf, checkpoint: checkpoint) else {
                throw ProofError("\(where_).proof: the leaf is not in the checkpoint's tree (the inclusion proof does not verify)")
            }
            let line = try text(directory, "\(where_).json")
            let event: PermissionEvent
            do {
                guard let decoded = try EventJSON.decode(line: line.hasSuffix("\n") ? String(line.dropLast()) : line) else {
                    throw ProofError("\(where_).json: holds no event")
                }
                event = decoded
            } catch let error as ProofError {
                throw error
            } catch {
                throw ProofError("\(where_).json: not an event line: \(error)")
            }
            guard event.seq == seq else { throw ProofError("\(where_).json: holds the event of seq \(event.seq.map(String.init) ?? "none")") }
            guard subject == nil || subject == event.subject else { throw ProofError("\(where_).json: another subject's event") }
            let commitment: [UInt8]?
            if let erased = event.erasedFields {
                commitment = erased.commitment
            } else {
                let fields = PersonalFields(of: event)
                if fields.isEmpty {
                    commitment = nil
                } else {
                    guard let salt = event.salt else { throw ProofError("\(where_).json: has personal values and no salt to check them with") }
                    commitment = SealedFields.commitment(to: fields, salt: salt)
                }
            }
            guard LeafData.make(envelope: event, seq: seq, commitment: commitment, subjectPrevious: previous) == leaf else {
                throw ProofError(previous.map { LeafData.namesPrevious(leaf, $0) } == false
                    ? "\(where_).leaf: names another event than \(previous!) as the subject's event before it: an event is missing"
                    : "\(where_).json: is not the event its leaf commits to")
            }
            previous = seq
            subject = event.subject
        }
        return Summary(checkpoint: checkpoint, seqs: seqs)
    }

    /// The most bytes a file of a bundle holds: an event line is at most ``EventJSON/maxLineBytes`` (1 MiB), and its
    /// leaf about as much; a proof or a checkpoint, a few KiB.
    static let fileSizeLimit = 2 << 20

    /// The bytes of the bundle's file `name`: a regular file of at most ``fileSizeLimit`` bytes (``WholeFile``).
    private static func bytes(_ directory: String, _ name: String) throws(ProofError) -> [UInt8] {
        do throws(WholeFile.Problem) {
            return try WholeFile.read(directory + "/" + name, limit: fileSizeLimit)
        } catch {
            switch error {
            case .unreadable: throw ProofError("\(name): missing or unreadable")
            case .notARegularFile: throw ProofError("\(name): not a regular file")
            case .tooLarge(let size): throw ProofError("\(name): \(size) bytes, more than any file of a bundle holds (at most \(fileSizeLimit))")
            case .changed: throw ProofError("\(name): changed while it was read")
            }
        }
    }

    private static func text(_ directory: String, _ name: String) throws(ProofError) -> String {
        let data = try bytes(directory, name)
        guard let text = String(validating: data, as: UTF8.self) else { throw ProofError("\(name): not UTF-8 text") }
        return text
    }
}
