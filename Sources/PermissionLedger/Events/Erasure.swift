import Foundation
import PermissionModel

/// What a `subject.erased` event erases, and on what basis (docs/spec/PRIVACY.md, "Erasure").
///
/// The erasure is of the subject's personal fields recorded before it, or before ``before`` when given; it is not
/// personal data itself, and changes no state.
public struct Erasure: Hashable, Sendable {
    /// Why the data is erased.
    public enum Basis: String, Hashable, Sendable, CaseIterable {
        /// A parent or guardian asked.
        case guardianRequest
        /// The subject's account was deleted.
        case accountDeleted
        /// A retention policy: the data is older than the ledger keeps it.
        case retention
        /// Any other basis; ``Erasure/reference`` says where it is recorded.
        case other
    }

    /// Why the data is erased.
    public var basis: Basis
    /// The app's case or ticket number: 1 to 128 bytes, no control character. Not personal data.
    public var reference: String?
    /// When given, only the subject's events recorded before this time are erased; otherwise all the subject's
    /// events recorded before the erasure.
    public var before: Timestamp?

    /// An erasure on `basis`, with the guardian's or the policy's `reference`, of what was recorded before
    /// `before` (all the subject recorded before the erasure when `nil`).
    public init(basis: Basis, reference: String? = nil, before: Timestamp? = nil) {
        self.basis = basis
        self.reference = reference
        self.before = before
    }
}

/// Which erasure made an event's personal fields unreadable: the `seq` of its `subject.erased` event and its basis.
/// What outputs show in place of an erased value (docs/spec/PRIVACY.md): `(erased, seq N)` in tables and CSV,
/// and in JSON `null` with `"erased": {"seq": N, "basis": BASIS}` beside it.
public struct ErasureMark: Hashable, Sendable {
    /// The seq of the `subject.erased` event.
    public var seq: UInt64
    /// Its basis.
    public var basis: Erasure.Basis

    /// The erasure recorded at `seq`, on `basis`.
    public init(seq: UInt64, basis: Erasure.Basis) {
        self.seq = seq
        self.basis = basis
    }
}

/// What an erased event keeps of its personal fields (docs/STORAGE.md, "Erasure"): the commitment the chain hash
/// covers in their place, and the token of each of its handles, which the tables hold. With its envelope, this is
/// all the record of an erased event holds that a reader can use, and all an import needs to restore it.
public struct ErasedFields: Hashable, Sendable {
    /// The 32-byte commitment to the erased fields, whose salt is gone with them.
    public var commitment: [UInt8]
    /// The tokens of the event's handles, 16 bytes each, in the order of its personal fields.
    public var tokens: [[UInt8]]

    /// What an erased event keeps: its `commitment` and its handles' `tokens`.
    public init(commitment: [UInt8], tokens: [[UInt8]]) {
        self.commitment = commitment
        self.tokens = tokens
    }
}
