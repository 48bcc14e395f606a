internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// The keys of one open ledger: its ledger key, its key store, and which slot of the store holds each subject's
/// data keys (the `keys` table), with the keys it has unwrapped kept in memory.
///
/// `keys` table entries (docs/STORAGE.md, "Keys") name a slot of the key store, versioned by the `seq` from which
/// they hold (a generation), as the projections' rows are:
/// - `subject ‖ 0x00 ‖ 0x01 ‖ day` (8 bytes, as times in keys) `‖ seq` → the slot of the subject's day key for
///   the events from `seq` on;
/// - `subject ‖ 0x00 ‖ 0x02 ‖ seq` → the slot of the subject's lookup key from `seq` on.
///
/// The events of a generation are those of `seq` at or after it and before the next one: an erasure, which
/// destroys a generation's key, starts a new generation for the data that comes after it.
///
/// A slot never changes what it holds (it is only ever destroyed), so unwrapped keys are cached by slot: the
/// table itself is read in the caller's transaction. New slots are made durable by ``syncNewKeys()`` before the
/// transaction that refers to them commits; the slots of a write that does not commit are destroyed
/// (``destroyUncommitted(after:)``), so that no key outlives the write that made it for data never committed.
final class KeyRing: @unchecked Sendable {
    let ledgerKey: LedgerKey
    let store: KeyStore
    let secrets: SecretSource
    /// How the ledger's storage format uses the keys.
    let use: KeyUse
    private let lock = NSLock()
    private var unwrapped: [UInt64: SymmetricKey] = [:]
    /// What each unwrapped key gives that depends on the key alone, made once: a day key's event keys
    /// (``DataKeys/eventKeys(dayKey:_:)``), a lookup key's keyed token hash.
    private var eventKeys: [UInt64: EventKeys] = [:]
    private var tokenHashers: [UInt64: TokenHasher] = [:]
    /// The handle values each subject's directory held when a reader last opened it (``HandleDirectory``), with
    /// the sealed chunks they came from and the slot of the key that opened them: valid while the chunks are the
    /// same bytes and the key is not destroyed, which a reader checks first. At most ``openedValuesLimit`` subjects.
    private var openedValues: [String: (slot: UInt64, chunks: [[UInt8]], values: HandleValueIndex)] = [:]
    static let openedValuesLimit = 1024
    /// The token handles that queries asked for lately (``tokenHandle(of:_:_:subject:)``), by the slot of the lookup
    /// key that made them: a handle asked about again (each message of a conversation asks whether its sender is
    /// known) costs a dictionary lookup instead of a keyed hash. At most ``recentTokensLimit``, all forgotten when
    /// full, and a slot's when its key is destroyed.
    private var recentTokens: [RecentToken: CommunicationHandle] = [:]
    static let recentTokensLimit = 4096
    private struct RecentToken: Hashable {
        let slot: UInt64
        let handle: CommunicationHandle
    }
    /// The events that point queries opened lately (``openedEvent(seq:slot:)``), by seq and the slot of the key
    /// that opened them: a question asked about again is not opened again. At most ``openedEventsLimit``, all
    /// forgotten when full, and a slot's when its key is destroyed.
    private var openedEvents: [OpenedEvent: PermissionEvent] = [:]
    static let openedEventsLimit = 1024
    private struct OpenedEvent: Hashable {
        let seq: UInt64
        let slot: UInt64
    }
    /// What the `keys` table says of each subject that queries asked about lately, by the snapshot it was read in
    /// (``ReadTransaction/snapshotID()``): the read transactions of one snapshot see one table, and a subject's
    /// entries change only with a commit, which makes a new snapshot. A query of a subject's handles reads both
    /// facts each time otherwise. At most ``subjectFactsLimit`` subjects, all forgotten when full.
    private var subjectFacts: [String: SubjectFacts] = [:]
    static let subjectFactsLimit = 4096
    private struct SubjectFacts {
        let snapshot: Int
        /// The slot of the subject's latest lookup key (``slot(_:_:_:atMost:)``), once read: `.some(nil)` when
        /// it has none, or its key is destroyed.
        var lookupSlot: UInt64??
        /// Whether the subject has an erasure entry (``hasErasures(_:_:subject:)``), once read.
        var hasErasures: Bool?
    }
    private var unsynced = false
    /// The slots added since the last ``syncNewKeys()``, in the order they were added: those of the write under
    /// way, or of writes that ended without reaching their commit.
    private var uncommitted: [UInt64] = []
    /// Whether an erasure may have left slots to overwrite: set by an erasure this process wrote, and at first,
    /// for what another process's crash may have left.
    private var mayHavePendingDestruction = true

    init(ledgerKey: LedgerKey, store: KeyStore, secrets: SecretSource, use: KeyUse) {
        self.ledgerKey = ledgerKey
        self.store = store
        self.secrets = secrets
        self.use = use
    }

    enum Kind: UInt8 {
        case day = 1
        case lookup = 2
        /// One event's own key, kept when an erasure destroys the day key of the day it was recorded on
        /// (the erasure's `before` falls inside that day, after the event): `subject ‖ 0x00 ‖ 0x03 ‖ seq`. In format
        /// 2 the event key derived from the day key; in format 3 a new key, under which the erasure sealed the
        /// event's fields again.
        case event = 3
        /// An erasure of the subject's, so that what reads an erased field can say which erasure erased it:
        /// `subject ‖ 0x00 ‖ 0x04 ‖ seq` (the `subject.erased` event's) → its basis (`ErasureMark`).
        case erasure = 4
        /// The key that seals the subject's handle values (``HandleDirectory``), from `seq` on:
        /// `subject ‖ 0x00 ‖ 0x05 ‖ seq`. Its latest generation holds at every as-of point.
        case values = 5
    }

    /// A `keys` entry's value: the slot, then, once an erasure destroys the slot's key, one byte 0. The entry stays,
    /// so that what the subject records afterwards starts a new generation and a reader knows the key is gone even
    /// before the key store has overwritten it (``pendingDestruction``).
    static func entryValue(slot: UInt64, destroyed: Bool) -> [UInt8] {
        var value = Keys.seq(slot)
        if destroyed { value.append(0) }
        return value
    }

    static func decodeEntryValue(_ value: UnsafeRawBufferPointer) -> (slot: UInt64, destroyed: Bool) {
        (Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: value.prefix(8))), value.count > 8)
    }

    /// The entity whose versions name the keys of `kind`: a generation's entry is this followed by its first `seq`.
    static func entry(subject: String, _ kind: Kind, day: Int64? = nil) -> [UInt8] {
        var key = Keys.subjectPrefix(subject)
        key.append(kind.rawValue)
        if let day { key.appendSeq(UInt64(bitPattern: day) ^ (1 << 63)) }
        return key
    }

    /// The key in `slot`, unwrapped once; `nil` when destroyed.
    func key(slot: UInt64) throws(LedgerError) -> SymmetricKey? {
        if let key = lock.withLock({ unwrapped[slot] }) { return key }
        guard let key = try store.key(slot: slot) else { return nil }
        lock.withLock { unwrapped[slot] = key }
        return key
    }

    /// Forgets the unwrapped keys of `slots` (destroyed).
    func forget(_ slots: some Sequence<UInt64>) {
        let destroyed = Set(slots)
        lock.withLock {
            for slot in destroyed {
                unwrapped.removeValue(forKey: slot)
                eventKeys.removeValue(forKey: slot)
                tokenHashers.removeValue(forKey: slot)
            }
            openedValues = openedValues.filter { !destroyed.contains($0.value.slot) }
            recentTokens = recentTokens.filter { !destroyed.contains($0.key.slot) }
            openedEvents = openedEvents.filter { !destroyed.contains($0.key.slot) }
        }
    }

    /// The slot of the generation of `entry` that holds at `seq`, as `txn` sees the `keys` table: `nil` when
    /// there is none, or when its key is destroyed.
    static func slot(_ txn: ReadTransaction, _ tables: Tables, _ entry: [UInt8], atMost seq: UInt64) throws -> UInt64? {
        guard let keys = tables.keys, let found = try txn.latest(keys, entry, atMost: seq) else { return nil }
        let (slot, destroyed) = decodeEntryValue(found.value)
        return destroyed ? nil : slot
    }

    /// The key of the generation of `entry` that holds at `seq`, made (and its slot recorded in `txn` as a
    /// generation from `seq`) when there is none.
    private func slotForWriting(_ txn: WriteTransaction, _ tables: Tables, _ entry: [UInt8], seq: UInt64) throws -> UInt64 {
        if let slot = try Self.slot(txn.reader, tables, entry, atMost: seq) {
            guard try key(slot: slot) != nil else {
                throw LedgerError(.damaged, "key store \(store.path): a key in use (\(slot)) is destroyed")
            }
            return slot
        }
        let generation = Keys.versioned(entry, seq)
        let key = secrets.key(for: "data key \(hexString(generation))")
        let slot = try store.add(key, secrets: secrets)
        try noteAdded(key, slot: slot, txn, tables)
        try txn.put(tables[.keys], key: generation, value: Keys.seq(slot))
        return slot
    }

    /// What gives the event keys of the day key in `slot`; `nil` when that key is destroyed.
    private func eventKeys(daySlot slot: UInt64) throws -> EventKeys? {
        if let keys = lock.withLock({ eventKeys[slot] }) { return keys }
        guard let dayKey = try key(slot: slot) else { return nil }
        let keys = DataKeys.eventKeys(dayKey: dayKey, use)
        lock.withLock { eventKeys[slot] = keys }
        return keys
    }

    /// The token hash of the lookup key in `slot`; `nil` when that key is destroyed.
    private func tokenHasher(lookupSlot slot: UInt64) throws -> TokenHasher? {
        if let hasher = lock.withLock({ tokenHashers[slot] }) { return hasher }
        guard let lookupKey = try key(slot: slot) else { return nil }
        let hasher = TokenHasher(tokenKey: DataKeys.tokenKey(lookupKey: lookupKey, use))
        lock.withLock { tokenHashers[slot] = hasher }
        return hasher
    }

    /// What gives the keys that seal the personal fields of `subject`'s events recorded on `day`, from `seq` on
    /// (until an erasure starts a new generation): its day key made when it has none.
    func eventKeysForWriting(_ txn: WriteTransaction, _ tables: Tables, subject: String, day: Int64, seq: UInt64) throws -> EventKeys {
        try eventKeys(daySlot: try slotForWriting(txn, tables, Self.entry(subject: subject, .day, day: day), seq: seq))!
    }

    /// The token hash of `subject`'s handles in the event at `seq`, its lookup key made when it has none.
    func tokenHasherForWriting(_ txn: WriteTransaction, _ tables: Tables, subject: String, seq: UInt64) throws -> TokenHasher {
        try tokenHasher(lookupSlot: try slotForWriting(txn, tables, Self.entry(subject: subject, .lookup), seq: seq))!
    }

    /// The key that seals `subject`'s handle values, made (from `seq`) when it has none.
    func valuesKeyForWriting(_ txn: WriteTransaction, _ tables: Tables, subject: String, seq: UInt64) throws -> SymmetricKey {
        try key(slot: try slotForWriting(txn, tables, Self.entry(subject: subject, .values), seq: seq))!
    }

    /// The key that opens `subject`'s event at `seq`, and the slot of the key it comes from: `nil` when it was
    /// destroyed (erased) or never made.
    func eventKey(_ txn: ReadTransaction, _ tables: Tables, subject: String, recordedAt: Timestamp, seq: UInt64) throws -> (key: SymmetricKey, slot: UInt64)? {
        if let slot = try Self.slot(txn, tables, Self.entry(subject: subject, .day, day: DataKeys.day(of: recordedAt)), atMost: seq) {
            return try eventKeys(daySlot: slot).map { ($0.key(seq: seq), slot) }
        }
        // The day key is gone: the event may have kept a key of its own.
        guard let keys = tables.keys, let own = try txn.get(keys, key: Keys.versioned(Self.entry(subject: subject, .event), seq)) else {
            return nil
        }
        let (slot, destroyed) = Self.decodeEntryValue(own)
        return destroyed ? nil : try key(slot: slot).map { ($0, slot) }
    }

    /// The event at `seq` as a point query opened it lately with the key from `slot` (without its salt).
    func openedEvent(seq: UInt64, slot: UInt64) -> PermissionEvent? {
        lock.withLock { openedEvents[OpenedEvent(seq: seq, slot: slot)] }
    }

    /// Keeps the event at `seq`, opened with the key from `slot`, for ``openedEvent(seq:slot:)``.
    func keepOpenedEvent(_ event: PermissionEvent, seq: UInt64, slot: UInt64) {
        lock.withLock {
            // Not when an erasure destroyed the key meanwhile (``forget(_:)`` dropped what it gave).
            guard unwrapped[slot] != nil else { return }
            if openedEvents.count >= Self.openedEventsLimit { openedEvents.removeAll(keepingCapacity: true) }
            openedEvents[OpenedEvent(seq: seq, slot: slot)] = event
        }
    }

    /// `handle` as the tables of `subject` hold it: its token handle (``TokenHasher/tokenHandle(_:)``) under the
    /// subject's latest lookup key, as `txn` sees it; `nil` when the subject has none, or its key is destroyed.
    func tokenHandle(of handle: CommunicationHandle, _ txn: ReadTransaction, _ tables: Tables, subject: String) throws -> CommunicationHandle? {
        let lookupSlot = try fact(of: subject, txn, kept: { $0.lookupSlot }, keep: { $0.lookupSlot = $1 }) {
            try Self.slot(txn, tables, Self.entry(subject: subject, .lookup), atMost: .max)
        }
        guard let slot = lookupSlot else { return nil }
        let recent = RecentToken(slot: slot, handle: handle)
        if let token = lock.withLock({ recentTokens[recent] }) { return token }
        guard let token = try tokenHasher(lookupSlot: slot)?.tokenHandle(handle) else { return nil }
        lock.withLock {
            // Not when an erasure destroyed the key meanwhile (``forget(_:)`` dropped its hasher).
            guard tokenHashers[slot] != nil else { return }
            if recentTokens.count >= Self.recentTokensLimit { recentTokens.removeAll(keepingCapacity: true) }
            recentTokens[recent] = token
        }
        return token
    }

    /// Whether `subject` has an erasure entry as `txn` sees it (``hasErasures(_:_:subject:)``), read once a snapshot.
    func hasErasureEntry(_ txn: ReadTransaction, _ tables: Tables, subject: String) throws -> Bool {
        try fact(of: subject, txn, kept: { $0.hasErasures }, keep: { $0.hasErasures = $1 }) {
            try Self.hasErasures(txn, tables, subject: subject)
        }
    }

    /// A fact of `subject` in `txn`'s snapshot (what `kept` gives of its ``SubjectFacts``): kept from an earlier
    /// read transaction of the same snapshot, or read (by `read`) and kept (by `keep`). A write transaction's
    /// reader, whose snapshot is the write under way, reads it each time.
    private func fact<Value>(
        of subject: String, _ txn: ReadTransaction, kept: (SubjectFacts) -> Value?, keep: (inout SubjectFacts, Value) -> Void,
        read: () throws -> Value
    ) throws -> Value {
        guard let snapshot = try? txn.snapshotID() else { return try read() }
        if let facts = lock.withLock({ subjectFacts[subject] }), facts.snapshot == snapshot, let value = kept(facts) {
            return value
        }
        let value = try read()
        lock.withLock {
            // A reader of an older snapshot, late, does not replace what a newer one kept.
            if let kept = subjectFacts[subject], kept.snapshot > snapshot { return }
            var facts = subjectFacts[subject].flatMap { $0.snapshot == snapshot ? $0 : nil } ?? SubjectFacts(snapshot: snapshot)
            keep(&facts, value)
            if subjectFacts.count >= Self.subjectFactsLimit, subjectFacts[subject] == nil { subjectFacts.removeAll(keepingCapacity: true) }
            subjectFacts[subject] = facts
        }
        return value
    }

    /// The values that `subject`'s directory held when it was last opened with the key in `slot`, if its chunks
    /// are still `chunks`, byte for byte.
    func openedValues(subject: String, slot: UInt64, chunks: [UnsafeRawBufferPointer]) -> HandleValueIndex? {
        lock.withLock {
            guard let opened = openedValues[subject], opened.slot == slot, opened.chunks.count == chunks.count,
                  zip(opened.chunks, chunks).allSatisfy({ kept, stored in
                      kept.count == stored.count && (stored.isEmpty || kept.withUnsafeBytes { memcmp($0.baseAddress!, stored.baseAddress!, stored.count) == 0 })
                  }) else { return nil }
            return opened.values
        }
    }

    /// Keeps what ``HandleDirectory/values(of:_:_:)`` opened of `subject`'s directory, for the next reader.
    func keepOpenedValues(_ values: HandleValueIndex, subject: String, slot: UInt64, chunks: [UnsafeRawBufferPointer]) {
        let copies = chunks.map { Array($0) }
        lock.withLock {
            if openedValues.count >= Self.openedValuesLimit, openedValues[subject] == nil { openedValues.removeAll() }
            openedValues[subject] = (slot, copies, values)
        }
    }

    /// Records a key just added to the store in `txn`: kept unwrapped, to be flushed before the transaction
    /// commits, and the store's number of slots recorded with the commit (``slotCountEntry``).
    func noteAdded(_ key: SymmetricKey, slot: UInt64, _ txn: WriteTransaction, _ tables: Tables) throws {
        lock.withLock {
            unwrapped[slot] = key
            unsynced = true
            uncommitted.append(slot)
        }
        try txn.put(tables[.meta], key: Self.slotCountEntry, value: Keys.seq(slot + 1))
    }

    /// How many slots were added since the last ``syncNewKeys()``: what a nested transaction notes when it
    /// starts, to destroy its own if it aborts (``destroyUncommitted(after:)``).
    var uncommittedCount: Int { lock.withLock { uncommitted.count } }

    /// Destroys the slots added since the last ``syncNewKeys()`` but the first `kept`, and forgets their keys.
    ///
    /// Called inside a write transaction, where no other write of this process can be under way: as each run of a
    /// write starts (for a run that did not commit: one whose map grew, or whose destruction failed), when a run
    /// throws, and where a nested transaction throws. None of those slots is referred to by a commit, nor ever will be. A crash
    /// before this destruction leaves the slots, referred to by nothing (docs/STORAGE.md).
    /// Called outside a write transaction, it could destroy the keys of another thread's write under way. The write
    /// paths call it through ``writing(_:_:_:)``.
    func destroyUncommitted(after kept: Int = 0) throws(LedgerError) {
        let slots = lock.withLock { Array(uncommitted.dropFirst(kept)) }
        guard !slots.isEmpty else { return }
        try store.destroy(slots)
        forget(slots)
        lock.withLock { uncommitted.removeLast(min(slots.count, uncommitted.count)) }
    }

    /// Destroys the slots past those the ledger accounts for (``slotCountEntry``), and forgets their keys: slots that
    /// a write added and that no commit names, nor ever will. They are what a write leaves when its process is killed
    /// before ``destroyUncommitted(after:)``, or when its commit fails after ``syncNewKeys()`` (a full map's commit
    /// is run again: the slots of the first run are then past the count); a backup taken while a write was under
    /// way holds them too. Each write runs this first (``writing(_:_:_:)``), before any commit can add a slot after
    /// them, and so does a writable open.
    ///
    /// Called inside a write transaction, where no other write of any process is under way: a write adds its slots
    /// inside its transaction, and the count it records commits with them. A slot that a `keys` entry names is kept
    /// all the same (a build from before the count was kept may have written it), and the count moves past every
    /// slot looked at, so that none is looked at again. A ledger that records no count yet (no commit has added a
    /// key: a new ledger whose first write was killed; or one made before the count was kept) counts from slot 0.
    ///
    /// - Throws: `.damaged` when the store holds more than ``abandonedLimit`` slots past the count: more than a write
    ///   is taken to leave, and a store planted with a size of terabytes is not read to its end.
    func destroyAbandoned(_ txn: WriteTransaction, _ tables: Tables) throws {
        let recorded = try txn.reader.get(tables[.meta], key: Self.slotCountEntry)
        if let recorded, recorded.count != 8 {
            throw LedgerError(.damaged, "the meta table's count of key slots is \(recorded.count) bytes long, not 8")
        }
        let from = recorded.map { Keys.decodeSeq($0) } ?? 0
        let end = store.slotCount
        guard from < end else { return }
        guard end - from <= Self.abandonedLimit else {
            throw LedgerError(.damaged, "key store \(store.path): holds \(end - from) keys past the \(from) the ledger has used; it is not this ledger's, or is damaged")
        }
        var held = try store.heldSlots(in: from..<end)
        if !held.isEmpty {
            let named = try Self.namedSlots(txn.reader, tables, in: from..<end)
            held.removeAll { named.contains($0) }
            try store.destroy(held)
            forget(held)
        }
        try txn.put(tables[.meta], key: Self.slotCountEntry, value: Keys.seq(end))
    }

    /// The most slots past the count that ``destroyAbandoned(_:_:)`` takes for keys a write left, and not for a
    /// damaged store: 16,777,216 (a GiB of them on disk). A write killed after it made more keys than that leaves a
    /// ledger that writers refuse (docs/DECISIONS.md).
    static let abandonedLimit: UInt64 = 1 << 24

    /// The slots in `range` that `keys` entries name: every generation's, destroyed or not.
    static func namedSlots(_ txn: ReadTransaction, _ tables: Tables, in range: Range<UInt64>) throws -> Set<UInt64> {
        var named: Set<UInt64> = []
        try forEachGeneration(txn, tables) { slot, _ in if range.contains(slot) { named.insert(slot) } }
        return named
    }

    /// Calls `body` with the slot of every generation's `keys` entry, and whether it is marked destroyed, in key
    /// order: subjects' entries only (not the list of slots still to overwrite, whose key starts with 0x00 and whose
    /// slots the entries name too), and of them not an erasure's (kind 4), which holds its basis, not a slot.
    static func forEachGeneration(_ txn: ReadTransaction, _ tables: Tables, _ body: (_ slot: UInt64, _ destroyed: Bool) throws -> Void) throws {
        guard let keys = tables.keys else { return }
        let cursor = try txn.cursor(keys)
        var entry = try cursor.first()
        while let e = entry {
            if let separator = e.key.firstIndex(of: 0), separator > e.key.startIndex, separator + 1 < e.key.endIndex,
               e.key[separator + 1] != Kind.erasure.rawValue, e.value.count >= 8 {
                let (slot, destroyed) = decodeEntryValue(e.value)
                try body(slot, destroyed)
            }
            entry = try cursor.next()
        }
    }

    /// Runs one run of a write transaction's body, inside that transaction (`txn`, on `tables`, whose key ring it
    /// uses), keeping the rule of ``destroyUncommitted(after:)``: the slots a write that did not commit left are
    /// destroyed as the run starts (this process's, and any past the count, ``destroyAbandoned(_:_:)``), and the
    /// slots this run added when it throws. When the body returns, the transaction is about to commit what it
    /// wrote: the slots it added are made durable first (``syncNewKeys()``, nothing to do when the body did it), so
    /// that none of them is ever destroyed. Every writing path runs its body through this, so that none forgets
    /// either half.
    static func writing<Result>(_ txn: WriteTransaction, _ tables: Tables, _ body: () throws -> Result) throws -> Result {
        let keyRing = tables.keyRing
        try keyRing?.destroyUncommitted()
        try keyRing?.destroyAbandoned(txn, tables)
        do {
            let result = try body()
            try keyRing?.syncNewKeys()
            return result
        } catch {
            try? keyRing?.destroyUncommitted()
            throw error
        }
    }

    /// The `meta` entry that holds how many slots of the key store the ledger accounts for: the store's count when
    /// a commit last added one, or when a write destroyed those past it that no commit named
    /// (``destroyAbandoned(_:_:)``). A writer
    /// refuses a key store with fewer, cut short or lost and made anew: its new keys would take the numbers of
    /// slots the ledger's entries name already, and what those sealed would never open again.
    static let slotCountEntry = Array("keySlots".utf8)

    /// Records that an erasure listed slots to overwrite.
    func notePendingDestruction() {
        lock.withLock { mayHavePendingDestruction = true }
    }

    /// Whether an erasure may have listed slots to overwrite since the last call.
    func takePendingDestruction() -> Bool {
        lock.withLock {
            defer { mayHavePendingDestruction = false }
            return mayHavePendingDestruction
        }
    }

    /// Makes the keys added since the last call durable: called before a transaction that refers to them commits,
    /// which they then belong to (a commit that fails after this leaves them, referred to by nothing).
    func syncNewKeys() throws(LedgerError) {
        guard lock.withLock({ unsynced }) else { return }
        try store.sync()
        lock.withLock {
            unsynced = false
            uncommitted.removeAll()
        }
    }
}
