import Foundation
import LMDB
import PermissionLedger
import Testing

/// The stored encoding, pinned by bytes committed in `Tests/Golden/` (see its README and docs/STORAGE.md,
/// "Versioning rules").
///
/// `Tests/Golden/storage-vN/NAME.txt` holds what a ledger of storage format N keeps in its `events` table
/// after importing `Fixtures/NAME.jsonl` alone: one line an event, `SEQ HASHHEX RECORDHEX`, the key (seq)
/// and the value (32-byte chain hash, then the event record) exactly as stored. The files sit outside the
/// test targets so that SwiftPM does not take them for resources.
///
/// - Today's build must still write those very bytes for the current version: a change of encoding fails
///   here, loudly, instead of silently leaving old ledgers undecodable or their hashes unverifiable.
/// - For every version ever committed, a ledger whose log holds the committed bytes (and nothing else: an
///   old ledger whose derived tables are rebuilt) must open, verify intact and read back the fixture's events.
@Suite("storage format golden records", .timeLimit(.minutes(10)))
struct StorageFormatGoldenTests {
    /// The storage format (meta `format`, and the records' version byte) this build writes.
    static let currentVersion: UInt8 = Ledger.formatVersion

    static let goldenDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // PermissionLedgerTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Golden")

    static let fixturesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static let changedEncoding = """
        the stored encoding changed: old ledgers would become unreadable or their hashes unverifiable — see \
        docs/STORAGE.md, Versioning rules: a change of encoding needs a new version byte and the old decoder kept
        """

    /// One stored event: its key and value in the `events` table.
    struct Record: Equatable, CustomStringConvertible {
        var seq: UInt64
        var hash: [UInt8]
        var record: [UInt8]

        var line: String { "\(seq) \(hex(hash)) \(hex(record))" }
        var description: String { line }
    }

    /// A golden file: a fixture's records as one version stored them.
    struct Golden: CustomTestStringConvertible, Sendable {
        var version: UInt8
        var fixture: String
        var url: URL { goldenDirectory.appendingPathComponent("storage-v\(version)/\(fixture).txt") }
        var testDescription: String { "storage-v\(version)/\(fixture)" }
    }

    /// The fixtures whose records the current version's golden files hold: together they use every event
    /// type and every payload variant (names with every component, the three handle kinds, update topics,
    /// custom choices with grantSeconds, default choices, expiry, every AskError code with and without a
    /// message, via messages, inPerson and default, observations with and without known handles, every
    /// permission state and cause, fractional seconds). Every valid fixture but the large family-day.
    static let fixtures = [
        "approval-messages", "ask-failed", "decline", "default-choice", "duplicate-response", "expiry-by-clock",
        "handles-observed", "in-person", "late-answer", "permissions", "send-canceled", "several-handles",
        "significant-update", "time-limited",
    ]

    /// Every golden file committed, of every version.
    static let allGolden: [Golden] = {
        let fm = FileManager.default
        var result: [Golden] = []
        for directory in ((try? fm.contentsOfDirectory(atPath: goldenDirectory.path)) ?? []).sorted()
        where directory.hasPrefix("storage-v") {
            guard let version = UInt8(directory.dropFirst("storage-v".count)) else { continue }
            let files = (try? fm.contentsOfDirectory(atPath: goldenDirectory.appendingPathComponent(directory).path)) ?? []
            for file in files.sorted() where file.hasSuffix(".txt") {
                result.append(Golden(version: version, fixture: String(file.dropLast(".txt".count))))
            }
        }
        return result
    }()

    static let currentGolden: [Golden] = fixtures.map { Golden(version: currentVersion, fixture: $0) }

    // MARK: Reading and writing records

    static func readGolden(_ golden: Golden) throws -> [Record] {
        let text = try String(contentsOf: golden.url, encoding: .utf8)
        var records: [Record] = []
        for (offset, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") && !line.isEmpty {
            let fields = line.split(separator: " ")
            let where_ = "\(golden.testDescription).txt:\(offset + 1)"
            try #require(fields.count == 3, "\(where_): expected SEQ HASHHEX RECORDHEX")
            let seq = try #require(UInt64(fields[0]), "\(where_): bad seq")
            let hash = try #require(bytes(hex: fields[1]), "\(where_): bad hash")
            let record = try #require(bytes(hex: fields[2]), "\(where_): bad record")
            try #require(hash.count == 32, "\(where_): the hash is not 32 bytes")
            records.append(Record(seq: seq, hash: hash, record: record))
        }
        return records
    }

    /// The `events` table of the ledger at `path` (which must not be open in this process).
    static func storedRecords(_ path: String) throws -> [Record] {
        let environment = try Environment(path: path, options: .init(maxDatabases: 32, readOnly: true))
        let events = try environment.openDatabase("events", create: false)
        return try environment.read { txn in
            var records: [Record] = []
            let cursor = try txn.cursor(events)
            var entry = try cursor.first()
            while let (key, value) = entry {
                #expect(key.count == 8, "an events key is 8 bytes (a big-endian seq)")
                let seq = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let bytes = Array(value)
                try #require(bytes.count > 32, "seq \(seq): the value is shorter than a chain hash")
                records.append(Record(seq: seq, hash: Array(bytes.prefix(32)), record: Array(bytes.dropFirst(32))))
                entry = try cursor.next()
            }
            return records
        }
    }

    /// Imports a fixture into a new ledger at `path` and closes it.
    static func importFixture(_ name: String, into path: String) throws {
        let text = try String(contentsOf: fixturesDirectory.appendingPathComponent("\(name).jsonl"), encoding: .utf8)
        let events = try text.split(separator: "\n").compactMap { try EventJSON.decode(line: String($0)) }
        let ledger = try Ledger(path: path, options: goldenOptions)
        try ledger.appendSynchronously(events)
    }

    /// Ledgers of format 2 seal personal fields with secrets of their own: golden ledgers draw them from this
    /// seed, so that the same fixture stores the same bytes every time.
    static var goldenOptions: Ledger.Options { .seeded("golden", durable: false) }

    /// Copies the keys of the ledger at `source` (its key file, its key store and its `keys` table) into the
    /// environment at `path`, which holds no other ledger file yet.
    static func copyKeys(from source: String, to path: String, closing ledger: Ledger) async throws {
        await ledger.close()
        for file in ["ledger.key", "data-keys"] {
            try FileManager.default.copyItem(atPath: source + "/" + file, toPath: path + "/" + file)
        }
        let from = try Environment(path: source, options: .init(maxDatabases: 32, readOnly: true))
        let keys = try from.openDatabase("keys", create: false)
        let entries: [([UInt8], [UInt8])] = try from.read { txn in
            var entries: [([UInt8], [UInt8])] = []
            let cursor = try txn.cursor(keys)
            var entry = try cursor.first()
            while let (key, value) = entry {
                entries.append((Array(key), Array(value)))
                entry = try cursor.next()
            }
            return entries
        }
        try from.close()
        let to = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
        let table = try to.openDatabase("keys", create: true)
        try to.write { txn in for (key, value) in entries { try txn.put(table, key: key, value: value) } }
        try to.close()
    }

    static func exportText(_ ledger: Ledger) throws -> String {
        var text = ""
        try ledger.export { text += $0 }
        return text
    }

    // MARK: Tests

    @Test("every fixture of the current version has its golden file")
    func goldenFilesExist() async throws {
        for golden in Self.currentGolden {
            if FileManager.default.fileExists(atPath: golden.url.path) { continue }
            // Recording is only ever for a file that does not exist yet: a new fixture or a new version.
            if ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" {
                try await withTemporaryDirectory { directory in
                    let path = directory + "/ledger"
                    try Self.importFixture(golden.fixture, into: path)
                    let records = try Self.storedRecords(path)
                    let header = """
                        # The events table of a storage-format-\(golden.version) ledger holding Fixtures/\(golden.fixture).jsonl:
                        # SEQ HASHHEX RECORDHEX per event (key, then value = 32-byte chain hash ‖ record), as stored.
                        # Never edit or regenerate: see Tests/Golden/README.md.

                        """
                    try FileManager.default.createDirectory(
                        at: golden.url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try (header + records.map { $0.line + "\n" }.joined()).write(to: golden.url, atomically: true, encoding: .utf8)
                }
                Issue.record("recorded \(golden.url.path): review and commit it")
            } else {
                Issue.record("""
                    \(golden.url.path) is missing. Record it once with RECORD_GOLDEN=1 swift test --filter \
                    StorageFormatGoldenTests (it never overwrites a file), then commit it.
                    """)
            }
        }
    }

    @Test("importing the fixture today stores exactly the committed records and hashes", arguments: currentGolden)
    func todaysEncodingIsTheGoldenOne(_ golden: Golden) async throws {
        try #require(FileManager.default.fileExists(atPath: golden.url.path), "\(golden.url.path) is missing")
        let expected = try Self.readGolden(golden)
        try #require(!expected.isEmpty)
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            try Self.importFixture(golden.fixture, into: path)
            let actual = try Self.storedRecords(path)
            #expect(actual.count == expected.count, "\(golden.testDescription): \(Self.changedEncoding)")
            for (a, e) in zip(actual, expected) where a != e {
                let what = a.seq != e.seq ? "the key" : a.record != e.record ? "the record bytes" : "the chain hash"
                Issue.record("""
                    \(golden.testDescription), seq \(e.seq): \(what) changed. \(Self.changedEncoding).
                    committed: \(e.line)
                    today:     \(a.line)
                    """)
                break
            }
        }
    }

    @Test("a ledger whose log holds the committed records opens, verifies and reads back the fixture", arguments: allGolden)
    func committedRecordsAreReadable(_ golden: Golden) async throws {
        let records = try Self.readGolden(golden)
        try #require(!records.isEmpty)
        #expect(records.map(\.seq) == Array(1...UInt64(records.count)), "seqs are 1, 2, … without gaps")
        if golden.version == 1 {
            // Format 1 has records of version 1 only.
            for record in records {
                #expect(record.record.first == 1, "seq \(record.seq): the record's version byte is 1")
            }
        }

        try await withTemporaryDirectory { directory in
            // An old ledger as far as the primary data goes: the format version and the log, nothing derived.
            let old = directory + "/old"
            try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: false)
            do {
                let environment = try Environment(path: old, options: .init(maxDatabases: 32, durable: false))
                let meta = try environment.openDatabase("meta", create: true)
                let events = try environment.openDatabase("events", create: true)
                try environment.write { txn in
                    try txn.put(meta, key: Array("format".utf8), value: [golden.version])
                    for r in records {
                        let key = (0..<8).map { UInt8(truncatingIfNeeded: r.seq >> (56 - 8 * UInt64($0))) }
                        try txn.put(events, key: key, value: r.hash + r.record)
                    }
                }
            }

            let today = try Ledger(path: directory + "/today", options: Self.goldenOptions)
            let text = try String(contentsOf: Self.fixturesDirectory.appendingPathComponent("\(golden.fixture).jsonl"), encoding: .utf8)
            try today.appendSynchronously(try text.split(separator: "\n").compactMap { try EventJSON.decode(line: String($0)) })
            let todayExport = try Self.exportText(today)
            let todayDigest = try await today.digest()

            let ledger: Ledger
            if golden.version == 1 {
                // A ledger of format 1 keeps personal fields unencrypted: it opens for writing no more, and is
                // migrated into a new ledger, which links its head to the old one's.
                let refusal = ledgerError { _ = try Ledger(path: old, options: .init(durable: false)) }
                #expect(refusal?.message.contains("permission-ledger migrate \(old) NEW") == true, "\(String(describing: refusal))")
                let migrated = directory + "/migrated"
                let oldHead = try await Ledger.migrate(from: old, to: migrated, options: Self.goldenOptions)
                #expect(oldHead.seq == UInt64(records.count) && oldHead.hash.bytes == records.last?.hash)
                ledger = try Ledger(path: migrated, options: Self.goldenOptions)
                let link = try ledger.migratedFrom()
                #expect(link?.seq == oldHead.seq && link?.hash == oldHead.hash, "the new ledger records the old one's head")
            } else {
                // The keys the records were sealed with come from the golden seed: a ledger made today with it
                // has them (a change of key derivation or sealing fails here too).
                try await Self.copyKeys(from: directory + "/today", to: old, closing: today)
                // Opening it for writing rebuilds the derived tables from the log (docs/STORAGE.md, rule 3 and 4).
                do {
                    ledger = try Ledger(path: old, options: Self.goldenOptions)
                } catch {
                    Issue.record("\(golden.testDescription): a ledger of the committed records does not open: \(error). \(Self.changedEncoding)")
                    return
                }
                #expect(try ledger.migratedFrom() == nil)
            }
            let report = try await ledger.verify()
            #expect(report.isIntact, "\(golden.testDescription): \(report.problem ?? ""). \(Self.changedEncoding)")
            #expect(report.events == UInt64(records.count))
            if golden.version == Self.currentVersion {
                #expect(report.head.bytes == records.last?.hash, "the head is the last committed hash")
            }

            // It reads back as the fixture's events, and derives the same state as a ledger made today.
            let oldExport = try Self.exportText(ledger)
            #expect(oldExport == todayExport, "\(golden.testDescription): the committed records read back differently. \(Self.changedEncoding)")
            #expect(try await ledger.digest() == todayDigest, "\(golden.testDescription): the same events give the same state")
        }
    }
}

private func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}

private func bytes<S: StringProtocol>(hex text: S) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard utf8.count % 2 == 0 else { return nil }
    func value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count / 2)
    var i = 0
    while i < utf8.count {
        guard let high = value(utf8[i]), let low = value(utf8[i + 1]) else { return nil }
        out.append(high << 4 | low)
        i += 2
    }
    return out
}
