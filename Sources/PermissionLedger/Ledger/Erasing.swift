import Foundation
import PermissionModel

extension Ledger {
    /// What ``erase(subject:_:occurredAt:id:)`` recorded.
    public struct ErasureSummary: Hashable, Sendable {
        /// The subject whose data was erased.
        public var subject: String
        /// The seq of the `subject.erased` event.
        public var seq: UInt64
        /// Whether the erasure was already in the ledger (an event with the same id and content): then this call
        /// erased nothing, and ``events`` and ``fields`` are 0.
        public var wasRecorded: Bool
        /// How many of the subject's events had personal fields that this erasure made unreadable.
        public var events: Int
        /// How many personal values it made unreadable: handle values, name components, descriptions, choice
        /// titles and error messages.
        public var fields: Int
    }

    /// Erases `subject`'s personal fields recorded before `erasure.before` (all those recorded before now when
    /// `nil`): appends a `subject.erased` event and destroys the keys of what it erases, in one step
    /// (docs/spec/PRIVACY.md). When it returns, the keys are gone from the key store.
    ///
    /// - Parameters:
    ///   - subject: the child (or user) whose data is erased.
    ///   - erasure: its basis (a guardian's request, retention), its reference, and the cut `before`, if any.
    ///   - id: the event's id, the idempotency key; a new UUID when `nil`.
    ///   - occurredAt: when the erasure was decided: the event's `occurredAt`.
    /// - Throws: ``AppendRejected`` when the subject has no event to erase, or the reference is not valid.
    public func erase(subject: String, _ erasure: Erasure, occurredAt: Timestamp, id: String? = nil) async throws -> ErasureSummary {
        try await offPool("ledger-erase") { [self] _ in try eraseSynchronously(subject: subject, erasure, occurredAt: occurredAt, id: id) }
    }

    /// ``erase(subject:_:occurredAt:id:)`` on the calling thread, for the tool.
    package func eraseSynchronously(subject: String, _ erasure: Erasure, occurredAt: Timestamp, id: String? = nil) throws -> ErasureSummary {
        let event = PermissionEvent(id: id ?? UUID().uuidString, subject: subject, occurredAt: occurredAt, payload: .subjectErased(erasure))
        // What is readable now, by seq: after the append, those the erasure covers are those it names.
        let readable = try readableFields(subject: subject, before: erasure.before)
        switch try appendSynchronously([event]).outcomes[0] {
        case .appended(let seq):
            let covered = try erasedSeqs(subject: subject, by: seq)
            return ErasureSummary(
                subject: subject, seq: seq, wasRecorded: false, events: covered.count,
                fields: covered.reduce(0) { $0 + (readable[$1] ?? 0) })
        case .duplicate(let seq):
            return ErasureSummary(subject: subject, seq: seq, wasRecorded: true, events: 0, fields: 0)
        }
    }

    /// The subject's events recorded before `before` (all when `nil`) whose personal fields are readable, by seq,
    /// with how many personal values each holds.
    func readableFields(subject: String, before: Timestamp?) throws -> [UInt64: Int] {
        try read(retries: Self.readRetries) { view in
            var fields: [UInt64: Int] = [:]
            try view.history(subject: subject, toSeq: view.head.seq) { recorded in
                let event = recorded.event
                guard event.erased == nil, before.map({ event.recordedAt! < $0 }) ?? true else { return }
                let count = PersonalFields(of: event).entries.count { $0.field != .name }
                if count > 0 { fields[recorded.seq] = count }
            }
            return fields
        }
    }

    /// The seqs of the subject's events that the erasure at `seq` erased.
    private func erasedSeqs(subject: String, by seq: UInt64) throws -> [UInt64] {
        try read(retries: Self.readRetries) { view in
            var seqs: [UInt64] = []
            try view.history(subject: subject, toSeq: seq - 1) { recorded in
                if recorded.event.erased?.seq == seq { seqs.append(recorded.seq) }
            }
            return seqs
        }
    }
}

extension Ledger {
    /// How many slots of the key store still hold a key that no `keys` entry names: 0 once a write, or an open for
    /// writing, has run after a write that never committed (its process killed, or its commit failed) left some
    /// (``KeyRing/destroyAbandoned(_:_:)``). For crash tests.
    package func keysNamedByNothing() throws -> Int {
        guard let ring = tables.keyRing else { return 0 }
        let slots = 0..<ring.store.slotCount
        let named = try environment.read { txn in try KeyRing.namedSlots(txn, tables, in: slots) }
        return try ring.store.heldSlots(in: slots).count { !named.contains($0) }
    }

    /// How many keys that committed erasures destroyed the key store still holds readable: 0 once every erasure is
    /// carried out, when ``erase(subject:_:occurredAt:id:)`` returns or, after a crash, once the ledger has been
    /// opened for writing. For crash tests.
    package func destroyedKeysStillReadable() throws -> Int {
        guard let ring = tables.keyRing else { return 0 }
        return try environment.read { txn in
            var count = 0
            try KeyRing.forEachGeneration(txn, tables) { slot, destroyed in
                if destroyed, try ring.store.key(slot: slot) != nil { count += 1 }
            }
            return count
        }
    }
}
