import Foundation
import PermissionModel

/// Reads the exported form of an erased event (docs/STORAGE.md, "Exports of erased events"): the event's JSON
/// form with each personal field `null` and `"erased": {"seq", "basis"}` beside it, as every output shows an
/// erased event, and at the end, in place of `salt`, the `commitment` its chain hash covers and the `tokens` of
/// its handles. From these an import restores the record, so the hash, that the event had where it was erased.
final class ErasedReading {
    private let commitment: [UInt8]
    private let tokens: [[UInt8]]
    private var marks: [ErasureMark] = []

    init(_ fields: Fields) throws(PermissionModelError) {
        guard let commitment = ChainHash(hex: try fields.string("commitment")) else {
            throw PermissionModelError("must be 64 lowercase hex digits", field: "commitment")
        }
        self.commitment = commitment.bytes
        tokens = try fields.optionalArray("tokens") { (value: JSONValue, path: String) throws(PermissionModelError) in
            guard case .string(let text) = value, let token = hexBytes(text), token.count == DataKeys.tokenSize else {
                throw PermissionModelError("must be \(DataKeys.tokenSize * 2) lowercase hex digits", field: path)
            }
            return token
        } ?? []
    }

    /// An erased text: `name` is `null` and the object holds `"erased"`. Returns the empty text that stands for it.
    func text(_ fields: Fields, _ name: String) throws(PermissionModelError) -> String {
        guard fields.isNull(name) else {
            throw PermissionModelError("must be null: the event is erased (it has a commitment)", field: fields.path + name)
        }
        let erased = try fields.object("erased")
        try erased.rejectUnknown(allowed: ["seq", "basis"])
        guard let seq = try erased.optionalInteger("seq"), seq >= 1 else {
            throw PermissionModelError("is required, 1 or more", field: erased.path + "seq")
        }
        marks.append(ErasureMark(seq: UInt64(seq), basis: try erased.enumeration("basis", Erasure.Basis.self)))
        return ""
    }

    /// The erasure every erased field names, and what the record keeps.
    func finish() throws(PermissionModelError) -> (ErasureMark, ErasedFields) {
        guard let mark = marks.first else {
            throw PermissionModelError("is given, but the event has no erased field", field: "commitment")
        }
        guard marks.allSatisfy({ $0 == mark }) else {
            throw PermissionModelError("the erased fields name different erasures; one erasure erases a whole event", field: "commitment")
        }
        return (mark, ErasedFields(commitment: commitment, tokens: tokens))
    }
}
