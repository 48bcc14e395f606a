internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// Each subject's handle values by their tokens, sealed in chunks: how a reader finds the values of a subject's
/// handles without opening the events that named them (docs/STORAGE.md, "Handle values").
///
/// The tables hold handles as tokens. A query that lists a subject's handles needs their values, and opening the
/// event that named each one costs a key derivation and a decryption per handle. The `handleValues` table keeps
/// them instead, each value once per subject, in chunks of up to ``capacity`` entries sealed under the subject's
/// **values key** (`KeyRing.Kind.values`): a subject with few handles is one decryption.
///
/// Entries, after the subject's key prefix (`subject ‖ 0x00`):
/// - `0x01 ‖ chunk` (8 bytes, big-endian) → ChaChaPoly's combined form (nonce, ciphertext, tag) of the chunk,
///   authenticated with the entry's key, then the first 8 bytes of SHA-256 over the entry's key and that box, so
///   that `verify`, which holds no key, finds a damaged chunk. The chunk: a varint count, then per handle its
///   16-byte token, its kind code and its value (varint length, UTF-8).
/// - `0x02 ‖ token` → the chunk (8 bytes) that holds the token's value: what an append checks before it adds one.
///
/// Chunks are numbered from 0 and filled in order: every chunk but the last holds ``capacity`` handles, and the
/// subject's index entries are tokens of its events that no erasure covers. `verify` checks both.
///
/// An erasure destroys the values key. A whole erasure deletes the entries; an erasure before a time writes them
/// again, under a new values key, with the values that the subject's events left readable still hold.
enum HandleDirectory {
    /// The most handles a chunk holds: a subject's first 64 handles are one chunk.
    static let capacity = 64

    static func chunkKey(_ prefix: [UInt8], _ number: UInt64) -> [UInt8] {
        var key = prefix
        key.append(1)
        key.appendSeq(number)
        return key
    }

    static func indexKey(_ prefix: [UInt8], token: some Collection<UInt8>) -> [UInt8] {
        var key = prefix
        key.append(2)
        key += token
        return key
    }

    /// One handle's entry: its token and the handle.
    struct Entry {
        var token: [UInt8]
        var handle: CommunicationHandle
    }

    static func encode(_ entries: [Entry]) -> [UInt8] {
        var w = RecordWriter(capacity: 48 * entries.count + 2)
        w.unsigned(UInt64(entries.count))
        for entry in entries {
            w.bytes += entry.token
            w.handle(entry.handle)
        }
        return w.bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> [Entry] {
        var r = RecordReader(bytes)
        let count = try r.count()
        guard count <= capacity else { throw .init(reason: "a handle values chunk of \(count) entries") }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let token = Array(try r.raw(DataKeys.tokenSize))
            entries.append(Entry(token: token, handle: try r.handle()))
        }
        guard r.isAtEnd else { throw .init(reason: "\(r.remaining) unexpected bytes after a handle values chunk") }
        return entries
    }

    static func seal(_ entries: [Entry], chunkKey: [UInt8], key: SymmetricKey, secrets: SecretSource, seq: UInt64) throws -> [UInt8] {
        let nonce = try ChaChaPoly.Nonce(data: secrets.bytes(12, for: "handle values \(hexString(chunkKey)) at \(seq)"))
        let box = Array(try ChaChaPoly.seal(encode(entries), using: key, nonce: nonce, authenticating: chunkKey).combined)
        return box + checksum(chunkKey: chunkKey, box: box[...])
    }

    /// The first 8 bytes of SHA-256 over a chunk's entry key and its sealed box.
    static func checksum(chunkKey: some Collection<UInt8>, box: some Collection<UInt8>) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: Array(chunkKey))
        hash.update(data: Array(box))
        return Array(hash.finalize().prefix(8))
    }

    /// The smallest stored chunk: nonce, tag and checksum around an empty chunk's one byte.
    static let smallestChunk = 12 + 1 + 16 + 8

    static func open(_ stored: UnsafeRawBufferPointer, chunkKey: [UInt8], key: SymmetricKey) throws -> [Entry] {
        guard stored.count >= smallestChunk else { throw LedgerError(.damaged, "a chunk of handle values is too short") }
        let box = UnsafeRawBufferPointer(rebasing: stored[..<(stored.count - 8)])
        let plaintext: Data
        do {
            plaintext = try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: box), using: key, authenticating: chunkKey)
        } catch {
            throw LedgerError(.damaged, "a chunk of handle values does not open with its key")
        }
        return try plaintext.withUnsafeBytes { bytes in try decode(bytes) }
    }

    // MARK: Writing

    /// Adds the values of `entries` that `subject`'s directory does not hold yet, in `txn`, for the event at `seq`:
    /// into its last chunk while it has room, then into new ones; each chunk changed is sealed once.
    static func add(_ entries: [Entry], subject: String, seq: UInt64, _ txn: WriteTransaction, _ tables: Tables, _ keyRing: KeyRing) throws {
        var pending = PendingChunks()
        try pending.add(entries, subject: subject, seq: seq, txn, tables, keyRing)
        try pending.write(txn, tables, keyRing)
    }

    /// The last chunk of each subject whose directory an append changed, held open until the append ends
    /// (``write(_:_:_:)``), so that a subject's new handles over many events of one transaction cost one opening
    /// and one sealing of its last chunk, not one per event. Index entries are written at once; a full chunk is
    /// written when the next one starts.
    struct PendingChunks {
        /// A subject's last chunk: its values key, its number, its entries.
        struct Chunk {
            var key: SymmetricKey
            var number: UInt64
            var entries: [Entry]
            /// The seq of the event that changed the chunk last (a seeded source's nonce context).
            var seq: UInt64
        }
        private var chunks: [ByteKey: Chunk] = [:]
        /// The most subjects whose chunks are held before all are written.
        static let limit = 4096

        var isEmpty: Bool { chunks.isEmpty }

        /// Each subject's last chunk as the writes so far left it (``WriterCache/lastChunks``), when given: what a
        /// subject's first new handle in a transaction then starts from, instead of opening the stored chunk.
        var known: WriterCache?
        /// The most chunks ``known`` keeps.
        let knownLimit: Int

        init(known: WriterCache? = nil, knownLimit: Int = WriterCache.lastChunkLimit) {
            self.known = known
            self.knownLimit = knownLimit
        }

        /// ``HandleDirectory/add(_:subject:seq:_:_:_:)``, the subject's last chunk held open.
        mutating func add(_ entries: [Entry], subject: String, seq: UInt64, _ txn: WriteTransaction, _ tables: Tables, _ keyRing: KeyRing) throws {
            guard let db = tables.handleValues, !entries.isEmpty else { return }
            let prefix = Keys.subjectPrefix(subject)
            let subjectKey = ByteKey(prefix)
            var chunk: Chunk
            // Taken out of the dictionary while it changes: a copy left there would make each append copy the entries.
            let held = chunks.removeValue(forKey: subjectKey)
            if let held {
                chunk = held
            } else {
                if chunks.count >= Self.limit { try write(txn, tables, keyRing) }
                if let last = known?.lastChunks.removeValue(forKey: subjectKey) {
                    chunk = last
                } else {
                    chunk = try Self.lastChunk(prefix: prefix, subject: subject, seq: seq, db, txn, tables, keyRing)
                }
            }
            var added = false
            for entry in entries {
                // The index entry is written first, where the value would go: one search of the tree, which finds a
                // value the directory holds already (or that the event names twice) when it is there.
                let full = chunk.entries.count == capacity
                let number = full ? chunk.number + 1 : chunk.number
                do {
                    try txn.put(db, key: indexKey(prefix, token: entry.token), value: Keys.seq(number), flags: .noOverwrite)
                } catch {
                    guard error == .keyExists else { throw error }
                    continue
                }
                if full {
                    try Self.put(chunk, prefix: prefix, db, txn, keyRing)
                    chunk.number += 1
                    chunk.entries = []
                }
                chunk.seq = seq
                chunk.entries.append(entry)
                added = true
            }
            if added || held != nil {
                chunks[subjectKey] = chunk
            } else {
                // Unchanged: what the next event of the subject starts from.
                remember(chunk, subject: subjectKey)
            }
        }

        /// Writes the chunks held, sealed: before the transaction commits, and before anything reads the directory.
        mutating func write(_ txn: WriteTransaction, _ tables: Tables, _ keyRing: KeyRing) throws {
            guard let db = tables.handleValues else { return }
            // In key order: the same pages whatever order the subjects came in.
            for (prefix, chunk) in chunks.sorted(by: { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }) {
                try Self.put(chunk, prefix: prefix.bytes, db, txn, keyRing)
                remember(chunk.entries.count < capacity ? chunk : Chunk(key: chunk.key, number: chunk.number + 1, entries: [], seq: chunk.seq), subject: prefix)
            }
            chunks.removeAll(keepingCapacity: true)
        }

        /// Keeps `chunk`, as the directory holds it, in ``known`` for the subject's next new handle, with at most
        /// ``knownLimit`` chunks kept.
        private func remember(_ chunk: Chunk, subject: ByteKey) {
            guard let known else { return }
            if known.lastChunks.count >= knownLimit { known.lastChunks.removeAll(keepingCapacity: true) }
            known.lastChunks[subject] = chunk
        }

        /// The subject's last chunk as the transaction holds it, when it has room; a new one after it otherwise.
        private static func lastChunk(
            prefix: [UInt8], subject: String, seq: UInt64, _ db: Database, _ txn: WriteTransaction, _ tables: Tables, _ keyRing: KeyRing
        ) throws -> Chunk {
            let key = try keyRing.valuesKeyForWriting(txn, tables, subject: subject, seq: seq)
            let cursor = try txn.cursor(db)
            let chunks = prefix + [1]
            // Chunk keys sort just before the subject's index keys: the entry before the first of them is its last chunk.
            let found = try cursor.seek(atOrAfter: prefix + [2]) != nil ? try cursor.previous() : try cursor.last()
            guard let last = found, last.key.count == chunks.count + 8, last.key.starts(with: chunks) else {
                return Chunk(key: key, number: 0, entries: [], seq: seq)
            }
            let number = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: last.key[chunks.count...]))
            let held = try open(last.value, chunkKey: chunkKey(prefix, number), key: key)
            return held.count < capacity
                ? Chunk(key: key, number: number, entries: held, seq: seq) : Chunk(key: key, number: number + 1, entries: [], seq: seq)
        }

        private static func put(_ chunk: Chunk, prefix: [UInt8], _ db: Database, _ txn: WriteTransaction, _ keyRing: KeyRing) throws {
            let entryKey = chunkKey(prefix, chunk.number)
            try txn.put(db, key: entryKey, value: seal(chunk.entries, chunkKey: entryKey, key: chunk.key, secrets: keyRing.secrets, seq: chunk.seq))
        }
    }

    /// Deletes every entry of `subject`'s directory, in `txn`.
    static func delete(subject: String, _ txn: WriteTransaction, _ tables: Tables) throws {
        guard let db = tables.handleValues else { return }
        let prefix = Keys.subjectPrefix(subject)
        let cursor = try txn.cursor(db)
        var keys: [[UInt8]] = []
        var entry = try cursor.seek(atOrAfter: prefix)
        while let e = entry, e.key.starts(with: prefix) {
            keys.append(Array(e.key))
            entry = try cursor.next()
        }
        for key in keys { _ = try txn.delete(db, key: key) }
    }

    /// The subject and the entries of the handles of the stored event at `seq`, read with its key: `nil` when it
    /// names no handle, or its fields are erased. An event imported in its erased form holds no sealed fields: it
    /// gives no value, also while the import has yet to reach the erasure that erased it.
    static func entries(ofEventAt seq: UInt64, _ txn: ReadTransaction, _ tables: Tables) throws -> (subject: String, entries: [Entry])? {
        guard let value = try txn.get(tables.events, key: Keys.seq(seq)), value.count > 32 else {
            throw LedgerError(.damaged, "event missing from the log", seq: seq)
        }
        let record = try SealedRecord(stored: UnsafeRawBufferPointer(rebasing: value[32...]))
        guard !record.tokens.isEmpty, !record.box.isEmpty else { return nil }
        let event = try decodeStoredEvent(value, seq: seq, txn: txn, tables: tables)
        guard event.erased == nil else { return nil }
        return (event.subject, zip(record.tokenList, SealedRecord.handles(of: event)).map { Entry(token: $0, handle: $1) })
    }

    /// Fills the directory of a ledger whose table was just made, from its events: each handle's value as the
    /// first readable event that names it holds it.
    static func fill(_ txn: WriteTransaction, _ tables: Tables, _ keyRing: KeyRing) throws {
        let cursor = try txn.cursor(tables.events)
        var seqs: [UInt64] = []
        var entry = try cursor.first()
        while let e = entry {
            seqs.append(Keys.decodeSeq(e.key))
            entry = try cursor.next()
        }
        for seq in seqs {
            guard let (subject, entries) = try entries(ofEventAt: seq, txn.reader, tables) else { continue }
            try add(entries, subject: subject, seq: seq, txn, tables, keyRing)
        }
    }

    // MARK: Reading

    /// `subject`'s handle values by their tokens, read in `txn`: `nil` when the ledger keeps no directory (it was
    /// made before it had one, and is open read-only); empty when the subject has none, or its values key is
    /// destroyed.
    static func values(of subject: String, _ txn: ReadTransaction, _ tables: Tables) throws -> HandleValueIndex? {
        guard let db = tables.handleValues else { return nil }
        guard let keyRing = tables.keyRing else { throw tables.keyUnavailable }
        guard let slot = try KeyRing.slot(txn, tables, KeyRing.entry(subject: subject, .values), atMost: .max),
              let key = try keyRing.key(slot: slot) else { return HandleValueIndex([]) }
        let chunks = Keys.subjectPrefix(subject) + [1]
        var keys: [UnsafeRawBufferPointer] = []
        var stored: [UnsafeRawBufferPointer] = []
        let cursor = try txn.cursor(db)
        var entry = try cursor.seek(atOrAfter: chunks)
        while let e = entry, e.key.count == chunks.count + 8, e.key.starts(with: chunks) {
            keys.append(e.key)
            stored.append(e.value)
            entry = try cursor.next()
        }
        // What this subject's chunks held when they were last opened, if they are still those bytes.
        if let known = keyRing.openedValues(subject: subject, slot: slot, chunks: stored) { return known }
        var entries: [(token: HandleToken, handle: CommunicationHandle)] = []
        entries.reserveCapacity(stored.count * capacity)
        for (chunkKey, chunk) in zip(keys, stored) {
            for held in try open(chunk, chunkKey: Array(chunkKey), key: key) {
                entries.append((HandleToken(bytes: held.token), held.handle))
            }
        }
        let values = HandleValueIndex(entries)
        keyRing.keepOpenedValues(values, subject: subject, slot: slot, chunks: stored)
        return values
    }
}
