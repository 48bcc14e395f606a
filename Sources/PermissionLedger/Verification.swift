import Foundation
import LMDB
import PermissionModel

/// What `verify` found.
public struct VerificationReport: Hashable, Sendable {
    /// How many events the log holds.
    public var events: UInt64
    /// The head's chain hash as recomputed.
    public var head: ChainHash
    /// The first damaged `seq`, if any (0 when the damage is in a projection not tied to one event).
    public var damagedSeq: UInt64?
    /// What is wrong, in plain words, or `nil` when the ledger is intact.
    public var problem: String?

    /// Whether nothing is wrong: the chain, every record and every projection check out.
    public var isIntact: Bool { problem == nil }
}

/// What an in-memory replay of the log did.
public struct ReplaySummary: Hashable, Sendable {
    /// How many events were replayed.
    public var events: UInt64
    /// How many questions the replay found.
    public var questions: Int
    /// The chain hash after the last event replayed.
    public var head: ChainHash
}

extension Ledger {
    /// Recomputes the hash chain over every stored event, checks each record decodes and re-encodes to the
    /// same bytes, then rebuilds every projection from the log alone and compares it, row by row, with the
    /// kept projections.
    public func verify() throws -> VerificationReport {
        try read { view in try Verifier(view: view).run() }
    }

    /// Replays the whole log into memory (current state only) through the same rules as appends.
    /// Used to measure replay and to check determinism.
    public func replayInMemory() throws -> ReplaySummary {
        try read { view in
            let store = MemoryStore(keepsRows: false)
            var projector = Projector(store: store, head: .empty)
            try StoredLog.forEach(view.txn, tables) { event, record in
                _ = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record)
            }
            return ReplaySummary(events: projector.head.seq, questions: store.questionCount, head: projector.head.hash)
        }
    }

    /// Derives every projection anew from the log, replacing the kept ones, in one write transaction.
    /// Use it after `verify` reported a damaged projection while the log itself is intact.
    public func rebuildProjections() throws(LedgerError) {
        guard !options.readOnly else { throw LedgerError(.storage, "\(path): the ledger is open read-only") }
        try Self.rebuildProjections(environment: environment, tables: tables, path: path)
    }

    static func rebuildProjections(environment: Environment, tables: Tables, path: String) throws(LedgerError) {
        do {
            try environment.write { txn in
                for (_, db) in tables.derived { try txn.drop(db) }
                try txn.put(tables.meta, key: Array("projections".utf8), value: [Ledger.projectionsVersion])
                let store = LMDBStore(txn: txn, tables: tables)
                store.rewritesLog = false
                var projector = Projector(store: store, head: .empty)
                try StoredLog.forEach(txn.reader, tables) { event, record in
                    _ = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record)
                }
            }
            try environment.sync(force: true)
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }
}

/// Iterates the raw log inside any transaction.
enum StoredLog {
    /// Calls `body` with each stored event (without `seq` and `hash`, as it was offered) and its stored record,
    /// after checking the record against the hash chain: damage is reported as damage, before any rule sees it.
    static func forEach(_ txn: ReadTransaction, _ tables: Tables, _ body: (PermissionEvent, [UInt8]) throws -> Void) throws {
        let cursor = try txn.cursor(tables.events)
        var entry = try cursor.first()
        var previous = ChainHash.genesis
        while let e = entry {
            let seq = Keys.decodeSeq(e.key)
            guard e.value.count > 32 else { throw LedgerError(.damaged, "the stored event is truncated", seq: seq) }
            let record = Array(e.value[32...])
            let hash = chainHash(previous: previous, record: record)
            guard hash.bytes.elementsEqual(e.value[0..<32]) else {
                throw LedgerError(.damaged, "the chain hash does not match the event's bytes", seq: seq)
            }
            previous = hash
            let event: PermissionEvent
            do {
                event = try record.withUnsafeBytes { buffer throws(EventRecord.DecodingError) in try EventRecord.decode(buffer) }
            } catch {
                throw LedgerError(.damaged, "\(error)", seq: seq)
            }
            try body(event, record)
            entry = try cursor.next()
        }
    }
}

private struct Verifier {
    let view: LedgerView

    func run() throws -> VerificationReport {
        let store = MemoryStore(keepsRows: true)
        var projector = Projector(store: store, head: .empty)
        var previous = ChainHash.genesis
        var expectedSeq: UInt64 = 1
        func damaged(_ seq: UInt64, _ why: String) -> VerificationReport {
            VerificationReport(events: view.head.seq, head: previous, damagedSeq: seq, problem: why)
        }
        let cursor = try view.txn.cursor(view.tables.events)
        var entry = try cursor.first()
        while let e = entry {
            guard e.key.count == 8 else { return damaged(expectedSeq, "a log key of \(e.key.count) bytes is not a seq") }
            let seq = Keys.decodeSeq(e.key)
            guard seq == expectedSeq else { return damaged(expectedSeq, "the log jumps from seq \(expectedSeq - 1) to \(seq): events are missing") }
            guard e.value.count > 32 else { return damaged(seq, "the stored event is truncated") }
            let record = Array(e.value[32...])
            let stored = ChainHash(unchecked: Array(e.value[0..<32]))
            let hash = chainHash(previous: previous, record: record)
            guard hash == stored else {
                return damaged(seq, "the chain hash does not match the event's bytes (stored \(stored), computed \(hash))")
            }
            let event: PermissionEvent
            do {
                event = try record.withUnsafeBytes { buffer throws(EventRecord.DecodingError) in try EventRecord.decode(buffer) }
            } catch {
                return damaged(seq, "\(error)")
            }
            guard EventRecord.encode(event, recordedAt: event.recordedAt!) == record else {
                return damaged(seq, "the stored record is not in canonical form")
            }
            do {
                guard case .appended = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record) else {
                    return damaged(seq, "the event duplicates an earlier one")
                }
            } catch let rejection as EventRejection {
                return damaged(seq, "the event breaks a rule of the log: \(rejection)")
            }
            previous = hash
            expectedSeq += 1
            entry = try cursor.next()
        }
        // Compare every derived table with the rebuild.
        for (name, db) in view.tables.derived {
            var expected = store.rows[name] ?? []
            expected.sort { $0.0.lexicographicallyPrecedes($1.0) }
            let tableCursor = try view.txn.cursor(db)
            var row = try tableCursor.first()
            var index = 0
            while true {
                let want = index < expected.count ? expected[index] : nil
                guard let have = row else {
                    if let want { return damaged(seqOf(name, want.0, want.1), "the \(name) projection lacks a row the log implies") }
                    break
                }
                guard let want else {
                    return damaged(seqOf(name, Array(have.key), Array(have.value)), "the \(name) projection holds a row the log does not imply")
                }
                if !have.key.elementsEqual(want.0) || !have.value.elementsEqual(want.1) {
                    let key = have.key.lexicographicallyPrecedes(want.0) ? Array(have.key) : want.0
                    let value = have.key.lexicographicallyPrecedes(want.0) ? Array(have.value) : want.1
                    return damaged(seqOf(name, key, value), "the \(name) projection differs from a rebuild from the log")
                }
                index += 1
                row = try tableCursor.next()
            }
        }
        return VerificationReport(events: projector.head.seq, head: previous, damagedSeq: nil, problem: nil)
    }

    /// The seq a derived row belongs to, for the report.
    private func seqOf(_ table: String, _ key: [UInt8], _ value: [UInt8]) -> UInt64 {
        switch table {
        case "questions", "handles", "permissions", "byRecordedAt": key.count >= 8 ? key.withUnsafeBytes(Keys.decodeSeq) : 0
        default: value.count == 8 ? value.withUnsafeBytes(Keys.decodeSeq) : 0
        }
    }
}
