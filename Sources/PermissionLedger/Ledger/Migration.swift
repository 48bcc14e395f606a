import Foundation
internal import LMDB
import PermissionModel

extension Ledger {
    /// Copies every event of the ledger of storage format 1 at `oldPath`, which keeps personal fields
    /// unencrypted, into a new ledger at `newPath`, which seals them (format 2), and returns the old ledger's head.
    ///
    /// Each event keeps its `seq`, `recordedAt` and content; its hash is the new ledger's, as the records differ.
    /// The new ledger records the old ledger's head (`seq` and chain hash) in its `meta` table
    /// (``Ledger/migratedFrom()``), so that the two logs stay linked: the old head's hash is what any copy of the old
    /// ledger ends with. The old ledger is only read: once the new one is checked, the operator removes the old
    /// one, and its backups, to remove the plaintext (docs/STORAGE.md, "Upgrading from format 1").
    ///
    /// - Throws: ``LedgerError``: `.notALedger` when the old ledger is not of format 1, or the new path holds a
    ///   ledger with events; `.damaged` when the old log fails its hash chain (nothing is appended then).
    ///   ``MigrationRefused`` when today's rules refuse an event of the old log. On any failure, the new directory
    ///   and key file are removed when the migration made them.
    @discardableResult
    public static func migrate(from oldPath: String, to newPath: String, options: Options = Options()) async throws -> LogHead {
        try await offPool("ledger-migrate") { _ in try migrate(from: oldPath, to: newPath, options: options) }
    }

    /// ``migrate(from:to:options:)`` on the calling thread, for the tool.
    @discardableResult
    package static func migrate(from oldPath: String, to newPath: String, options: Options = Options()) throws -> LogHead {
        let events: [PermissionEvent]
        let oldHead: LogHead
        do {
            // Looked at and opened while no other open in this process runs, as a ledger is (``Environment/whileOpening(_:)``).
            let environment = try Environment.whileOpening { () throws -> Environment in
                try LedgerDirectory.prepare(path: oldPath, readOnly: true)
                return try Environment(path: oldPath, options: .init(
                    maxDatabases: StorageTable.allCases.count + StorageTable.retiredNames.count + 2, readOnly: true))
            }
            defer { try? environment.close() }
            let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: false)
            let format = try environment.read { txn in try txn.get(meta, key: Array("format".utf8)).map { Array($0) } }
            guard format == [1] else {
                throw LedgerError(.notALedger, "\(oldPath): not a ledger of storage format 1 (it is \(format.map { "format \($0.first ?? 0)" } ?? "of no format")); only format 1 is migrated")
            }
            let log = try environment.openDatabase(StorageTable.events.rawValue, create: false)
            (events, oldHead) = try environment.read { txn in try plaintextLog(txn, log) }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw LedgerError.storage(error, path: oldPath)
        }
        // What the migration makes and a failure removes: the new directory, or what it adds to one that was there,
        // and the key file, when it is new.
        let keyFile = LedgerKey.Location.of(ledgerPath: newPath, given: options.keyFile).path
        let keyFileWasThere = FileManager.default.fileExists(atPath: keyFile)
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: newPath)).map(Set.init)
        func removeWhatWasMade() {
            var made = keyFileWasThere ? [] : [keyFile]
            if let existing {
                let now = (try? FileManager.default.contentsOfDirectory(atPath: newPath)) ?? []
                made += now.filter { !existing.contains($0) }.map { newPath + "/" + $0 }
            } else {
                made.append(newPath)
            }
            for path in made { try? FileManager.default.removeItem(atPath: path) }
        }
        let ledger = try Ledger(path: newPath, options: options)
        do {
            defer { ledger.closeNow() }
            guard try ledger.head().seq == 0 else {
                throw LedgerError(.notALedger, "\(newPath): already holds a ledger with events; migrate into a new directory")
            }
            do {
                try ledger.appendStoredElsewhere(events)
            } catch let rejected as AppendRejected {
                // The batch is the old log from seq 1 on: an event's place in it is its seq.
                throw MigrationRefused(oldPath: oldPath, rejections: rejected.rejections.map { (UInt64($0.index + 1), $0.rejection) })
            }
            try ledger.environment.write { txn in
                try txn.put(ledger.tables.meta, key: Array("migratedFrom".utf8), value: Keys.seq(oldHead.seq) + oldHead.hash.bytes)
            }
        } catch {
            removeWhatWasMade()
            throw error
        }
        return oldHead
    }

    /// Every event of a format 1 log, checked against its chain, with its `seq` and `recordedAt` (and no hash,
    /// which the new ledger assigns), and the log's head.
    private static func plaintextLog(_ txn: ReadTransaction, _ log: Database) throws -> ([PermissionEvent], LogHead) {
        var events: [PermissionEvent] = []
        var head = LogHead.empty
        let cursor = try txn.cursor(log)
        var entry = try cursor.first()
        while let e = entry {
            let seq = Keys.decodeSeq(e.key)
            guard e.key.count == 8, seq == head.seq + 1, e.value.count > 32 else {
                throw LedgerError(.damaged, "the old log is damaged: seq \(head.seq + 1) is missing or truncated", seq: head.seq + 1)
            }
            let record = [UInt8](copying: UnsafeRawBufferPointer(rebasing: e.value[32...]))
            let hash = chainHash(previous: head.hash, record: record)
            guard hash.bytes.hasSameBytes(as: UnsafeRawBufferPointer(rebasing: e.value[0..<32])) else {
                throw LedgerError(.damaged, "the old log's chain hash does not match the event's bytes", seq: seq)
            }
            var event: PermissionEvent
            do {
                event = try record.withUnsafeBytes { buffer throws(EventRecord.DecodingError) in try EventRecord.decode(buffer) }
            } catch {
                throw LedgerError(.damaged, "\(error)", seq: seq)
            }
            event.seq = seq
            head = LogHead(seq: seq, hash: hash, recordedAt: event.recordedAt)
            events.append(event)
            entry = try cursor.next()
        }
        return (events, head)
    }

    /// The head of the format 1 ledger this ledger was migrated from (``migrate(from:to:options:)``), or `nil`.
    public func migratedFrom() throws -> LogHead? {
        try read { view in
            guard let value = try view.txn.get(tables.meta, key: Array("migratedFrom".utf8)), value.count == 40 else { return nil }
            return LogHead(
                seq: Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: value[0..<8])),
                hash: ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: value[8..<40]))), recordedAt: nil)
        }
    }
}

/// The old log holds events that today's rules refuse (``Ledger/migrate(from:to:options:)``): nothing was migrated.
public struct MigrationRefused: Error, Sendable, CustomStringConvertible {
    /// The old ledger's path.
    public var oldPath: String
    /// Each refused event's `seq` in the old log, with the reason; at most the append's limit are listed.
    public var rejections: [(seq: UInt64, rejection: EventRejection)]

    /// One line: the first refused event, and how many more there are.
    public var description: String {
        guard let first = rejections.first else { return "\(oldPath): the old log was refused; nothing was migrated" }
        let more = rejections.count > 1 ? " (and \(rejections.count - 1) more)" : ""
        return "\(oldPath): seq \(first.seq): \(first.rejection)\(more); today's rules refuse it, and nothing was migrated"
    }
}
