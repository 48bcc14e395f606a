internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// What an erasure destroys, and how it stays crash-atomic (docs/STORAGE.md, "Erasure").
///
/// In the transaction that appends the `subject.erased` event, every `keys` entry whose key opens a personal field
/// the erasure covers is marked destroyed, and its slot is added to the list of slots still to overwrite. From that
/// commit on, no reader uses those keys. Right after the commit, the key store overwrites the slots with zeros and
/// flushes them, and the list is emptied; a crash in between leaves the list, and the next writable open finishes
/// the job. The event and the destruction are therefore one step: before the commit nothing is erased, after it
/// every covered field is unreadable, and its key is gone from the key store as soon as the writer runs again.
extension KeyRing {
    /// The `keys` entry listing the slots whose destruction is committed and not yet carried out (8 bytes each).
    /// It starts with 0x00, which no subject's entries start with (a subject is never empty, and holds no NUL).
    static let pendingDestruction: [UInt8] = [0] + Array("pending destruction".utf8)

    /// Marks destroyed, in `txn`, every key of `subject` that opens a personal field recorded before `before`
    /// (before the erasure at `erasureSeq` when `nil`), and lists their slots for ``completeDestruction(_:_:)``.
    ///
    /// - A day generation whose day ends at or before the cut is destroyed.
    /// - A day generation the cut falls inside is destroyed too; its events recorded at or after the cut first get
    ///   keys of their own, wrapped in new slots, so that they stay readable: in format 2 their event keys, in
    ///   format 3 new keys, under which their personal fields are sealed again (``reseal(_:_:seq:dayKey:ownKey:)``).
    /// - Event keys of their own that an earlier erasure kept, for events before the cut, are destroyed.
    /// - A whole erasure (no `before`) destroys the lookup key: the tokens of the erased handles can no longer be
    ///   matched, and what the subject records afterwards is tokenized under a new one.
    /// - The values key of the subject's handle values is destroyed, and the values the erasure leaves readable are
    ///   sealed again under a new one (``rewriteHandleValues(_:_:subject:whole:erasureSeq:)``).
    ///
    /// Returns the slots marked.
    @discardableResult
    func erase(
        _ txn: WriteTransaction, _ tables: Tables, subject: String, basis: Erasure.Basis, before: Timestamp?, erasureSeq: UInt64
    ) throws -> [UInt64] {
        let keys = tables[.keys]
        try txn.put(keys, key: Keys.versioned(Self.entry(subject: subject, .erasure), erasureSeq), value: Self.erasureValue(basis: basis, before: before))
        var marked: [(entry: [UInt8], slot: UInt64)] = []
        /// The events that keep a key of their own, with the day key their fields are sealed under.
        var kept: [(seq: UInt64, dayKey: SymmetricKey)] = []

        let days = try generations(txn.reader, keys, prefix: Self.entry(subject: subject, .day), dated: true)
        for (index, generation) in days.enumerated() where !generation.destroyed && generation.from < erasureSeq {
            let start = DataKeys.start(ofDay: generation.day)
            if let before, start >= before { continue }
            if let before, DataKeys.start(ofDay: generation.day + 1) > before, let dayKey = try key(slot: generation.slot) {
                let next = days.indices.contains(index + 1) && days[index + 1].day == generation.day ? days[index + 1].from : erasureSeq
                // The generation's events: the subject's of its day from its first seq on (those of later days are
                // sealed under their own days' keys).
                for seq in try Self.subjectSeqs(txn.reader, tables, subject: subject, from: generation.from, to: min(next, erasureSeq)) {
                    guard let header = try txn.reader.eventHeader(tables, seq: seq, id: false), header.recordedAt >= before,
                          DataKeys.day(of: header.recordedAt) == generation.day else { continue }
                    kept.append((seq, dayKey))
                }
            }
            marked.append((generation.entry, generation.slot))
        }

        for own in try generations(txn.reader, keys, prefix: Self.entry(subject: subject, .event), dated: false)
        where !own.destroyed && own.from < erasureSeq {
            if let before, let header = try txn.reader.eventHeader(tables, seq: own.from, id: false), header.recordedAt >= before { continue }
            marked.append((own.entry, own.slot))
        }

        if before == nil, let lookup = try generations(txn.reader, keys, prefix: Self.entry(subject: subject, .lookup), dated: false).last,
           !lookup.destroyed {
            marked.append((lookup.entry, lookup.slot))
        }

        if let values = try generations(txn.reader, keys, prefix: Self.entry(subject: subject, .values), dated: false).last, !values.destroyed {
            marked.append((values.entry, values.slot))
        }

        for (entry, slot) in marked { try txn.put(keys, key: entry, value: Self.entryValue(slot: slot, destroyed: true)) }
        for (seq, dayKey) in kept {
            let entry = Keys.versioned(Self.entry(subject: subject, .event), seq)
            let own: SymmetricKey
            switch use {
            case .derived:
                own = DataKeys.eventKey(dayKey: dayKey, seq: seq)
            case .direct:
                own = secrets.key(for: "data key \(hexString(entry))")
                // An event without personal fields needs no key.
                guard try reseal(txn, tables, seq: seq, dayKey: dayKey, ownKey: own) else { continue }
            }
            let slot = try store.add(own, secrets: secrets)
            try noteAdded(own, slot: slot, txn, tables)
            try txn.put(keys, key: entry, value: Self.entryValue(slot: slot, destroyed: false))
        }
        try rewriteHandleValues(txn, tables, subject: subject, whole: before == nil, erasureSeq: erasureSeq)
        let slots = marked.map(\.slot)
        if !slots.isEmpty {
            var pending = try txn.reader.get(keys, key: Self.pendingDestruction).map { Array($0) } ?? []
            for slot in slots { pending += Keys.seq(slot) }
            try txn.put(keys, key: Self.pendingDestruction, value: pending)
            notePendingDestruction()
        }
        return slots
    }

    /// Seals the personal fields of the event at `seq`, sealed under `dayKey`, again under `ownKey`, in its record
    /// of `events`: its chained part, so its hash, stays as it is (docs/STORAGE.md, "Erasure"). Returns false when the
    /// event has no sealed fields.
    private func reseal(_ txn: WriteTransaction, _ tables: Tables, seq: UInt64, dayKey: SymmetricKey, ownKey: SymmetricKey) throws -> Bool {
        guard let value = try txn.reader.get(tables.events, key: Keys.seq(seq)) else {
            throw EventRecord.DecodingError(reason: "seq \(seq) is indexed but missing from the log")
        }
        let hash: ChainHash
        var record: SealedRecord
        do {
            let stored = try storedParts(value)
            (hash, record) = (stored.hash, try SealedRecord(stored: stored.record))
            guard !record.box.isEmpty else { return false }
            record.box = try SealedFields.reseal(record.box, key: dayKey, newKey: ownKey, additionalData: record.chained, secrets: secrets, seq: seq)
        } catch let error as EventRecord.DecodingError {
            // Which event is damaged: what splits and opens a record does not know its seq.
            throw EventRecord.DecodingError(reason: "seq \(seq): \(error.reason)")
        }
        try txn.put(tables.events, key: Keys.seq(seq), value: hash.bytes + record.stored())
        return true
    }

    /// Deletes `subject`'s handle values (``HandleDirectory``), whose key the erasure destroys; after an erasure
    /// before a time, writes again, under a new values key from `erasureSeq`, the values that the subject's events
    /// still readable hold. Called once the erasure's keys are marked, so that the erased events read as erased.
    private func rewriteHandleValues(_ txn: WriteTransaction, _ tables: Tables, subject: String, whole: Bool, erasureSeq: UInt64) throws {
        guard tables.handleValues != nil else { return }
        try HandleDirectory.delete(subject: subject, txn, tables)
        guard !whole else { return }
        var kept: [HandleDirectory.Entry] = []
        for seq in try Self.subjectSeqs(txn.reader, tables, subject: subject, from: 0, to: erasureSeq) {
            if let found = try HandleDirectory.entries(ofEventAt: seq, txn.reader, tables) { kept += found.entries }
        }
        try HandleDirectory.add(kept, subject: subject, seq: erasureSeq, txn, tables, self)
    }

    /// The erasure that made the personal fields of `subject`'s event at `seq`, recorded at `recordedAt`,
    /// unreadable: the first of the subject's erasures after it whose cut (if it has one) is after `recordedAt`.
    /// `nil` when none covers it: a key missing for another reason is damage.
    static func erasure(_ txn: ReadTransaction, _ tables: Tables, subject: String, seq: UInt64, recordedAt: Timestamp) throws -> ErasureMark? {
        guard let keys = tables.keys else { return nil }
        let prefix = entry(subject: subject, .erasure)
        let cursor = try txn.cursor(keys)
        var found = try cursor.seek(atOrAfter: Keys.versioned(prefix, seq + 1))
        while let e = found, e.key.count == prefix.count + 8, e.key.starts(with: prefix) {
            if let (basis, before) = decodeErasureValue(e.value), before.map({ recordedAt < $0 }) ?? true {
                return ErasureMark(seq: Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key[prefix.count...])), basis: basis)
            }
            found = try cursor.next()
        }
        return nil
    }

    /// The erasure that covers an event (``erasure(_:_:subject:seq:recordedAt:)``), looked for only when its
    /// subject has one: whether each subject asked about has an erasure is read once.
    struct ErasureLookup {
        /// The subjects asked about before the last.
        private var hasErasures: [String: Bool] = [:]
        /// The subject asked about last: queries ask about one subject's rows in a row.
        private var last: (subject: String, hasErasures: Bool)?

        /// The erasure that covers `subject`'s event at `seq`, whose `recordedAt` is read only when the subject
        /// has an erasure.
        mutating func erasure(
            _ txn: ReadTransaction, _ tables: Tables, subject: String, seq: UInt64, recordedAt: () throws -> Timestamp
        ) throws -> ErasureMark? {
            try erasure(txn, tables, subject: subject, event: { (seq, try recordedAt()) })
        }

        /// The erasure that covers the event of `subject`'s that `event` finds (its seq and `recordedAt`), which
        /// is looked for only when the subject has an erasure.
        mutating func erasure(
            _ txn: ReadTransaction, _ tables: Tables, subject: String, event: () throws -> (seq: UInt64, recordedAt: Timestamp)
        ) throws -> ErasureMark? {
            let has: Bool
            if let last, last.subject == subject {
                has = last.hasErasures
            } else if let known = hasErasures[subject] {
                has = known
                last = (subject, has)
            } else {
                has = try tables.keyRing?.hasErasureEntry(txn, tables, subject: subject) ?? KeyRing.hasErasures(txn, tables, subject: subject)
                // The subject before goes to the dictionary, which a query of one subject never fills.
                if let last { hasErasures[last.subject] = last.hasErasures }
                last = (subject, has)
            }
            guard has else { return nil }
            let (seq, recordedAt) = try event()
            return try KeyRing.erasure(txn, tables, subject: subject, seq: seq, recordedAt: recordedAt)
        }
    }

    /// Whether `subject` has an erasure entry.
    static func hasErasures(_ txn: ReadTransaction, _ tables: Tables, subject: String) throws -> Bool {
        guard let keys = tables.keys else { return false }
        let prefix = entry(subject: subject, .erasure)
        guard let found = try txn.cursor(keys).seek(atOrAfter: prefix) else { return false }
        return found.key.count == prefix.count + 8 && found.key.starts(with: prefix)
    }

    /// An erasure entry's value: the index of its basis in `Erasure.Basis.allCases` (1 byte), then its cut when it
    /// has one (8 bytes, as times in keys).
    static func erasureValue(basis: Erasure.Basis, before: Timestamp?) -> [UInt8] {
        var value = [UInt8(Erasure.Basis.allCases.firstIndex(of: basis)!)]
        if let before { value.appendSeq(UInt64(bitPattern: before.microseconds) ^ (1 << 63)) }
        return value
    }

    static func decodeErasureValue(_ value: UnsafeRawBufferPointer) -> (basis: Erasure.Basis, before: Timestamp?)? {
        guard value.count == 1 || value.count == 9, Int(value[0]) < Erasure.Basis.allCases.count else { return nil }
        let basis = Erasure.Basis.allCases[Int(value[0])]
        guard value.count == 9 else { return (basis, nil) }
        let bits = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: value[1...])) ^ (1 << 63)
        return (basis, Timestamp(microseconds: Int64(bitPattern: bits)))
    }

    /// Overwrites the slots that committed erasures listed, then takes them off the list: called after a write
    /// that erased, and when a ledger opens for writing (to finish what a crash interrupted). In the same
    /// transaction, the slots that writes which never committed left are destroyed (``destroyAbandoned(_:_:)``).
    ///
    /// The list is read, the slots overwritten and the list emptied in one write transaction: an erasure still
    /// committing when this call took the note it left (``takePendingDestruction()``) commits first, so its slots
    /// are on the list read here, and a call that finds the list emptied by another returns only once that other
    /// has overwritten them. A crash before the commit leaves the list, and the next writable open overwrites again.
    func completeDestruction(_ environment: Environment, _ tables: Tables) throws {
        guard let keys = tables.keys, takePendingDestruction() else { return }
        try environment.write { txn in
            let slots = try Self.slots(in: txn.reader.get(keys, key: Self.pendingDestruction))
            if !slots.isEmpty {
                try store.destroy(slots)
                forget(slots)
                _ = try txn.delete(keys, key: Self.pendingDestruction)
            }
            try destroyAbandoned(txn, tables)
        }
    }

    private static func slots(in value: UnsafeRawBufferPointer?) -> [UInt64] {
        guard let value else { return [] }
        return stride(from: 0, to: value.count - value.count % 8, by: 8).map {
            Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: value[$0..<($0 + 8)]))
        }
    }

    /// One `keys` entry: the generation's entry key, the day it is for (dated entries), the seq it holds from,
    /// and its slot.
    private struct Generation {
        var entry: [UInt8]
        var day: Int64
        var from: UInt64
        var slot: UInt64
        var destroyed: Bool
    }

    /// The entries under `prefix` in key order: a dated prefix is followed by a day and a seq, another by a seq.
    private func generations(_ txn: ReadTransaction, _ keys: Database, prefix: [UInt8], dated: Bool) throws -> [Generation] {
        let length = prefix.count + (dated ? 16 : 8)
        let cursor = try txn.cursor(keys)
        var found: [Generation] = []
        var entry = try cursor.seek(atOrAfter: prefix)
        while let e = entry, e.key.starts(with: prefix) {
            if e.key.count == length {
                let day = dated ? Int64(bitPattern: Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key[prefix.count..<(prefix.count + 8)])) ^ (1 << 63)) : 0
                let (slot, destroyed) = Self.decodeEntryValue(e.value)
                found.append(Generation(
                    entry: Array(e.key), day: day, from: Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key[(length - 8)...])),
                    slot: slot, destroyed: destroyed))
            }
            entry = try cursor.next()
        }
        return found
    }

    /// The seqs of `subject`'s events from `from` up to (not including) `to`, from `subjectEvents`.
    private static func subjectSeqs(_ txn: ReadTransaction, _ tables: Tables, subject: String, from: UInt64, to: UInt64) throws -> [UInt64] {
        let prefix = Keys.subjectPrefix(subject)
        let cursor = try txn.cursor(tables.subjectEvents)
        var seqs: [UInt64] = []
        var entry = try cursor.seek(atOrAfter: Keys.versioned(prefix, from))
        while let e = entry, e.key.starts(with: prefix), e.key.count == prefix.count + 8 {
            let seq = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key[prefix.count...]))
            guard seq < to else { break }
            seqs.append(seq)
            entry = try cursor.next()
        }
        return seqs
    }
}
