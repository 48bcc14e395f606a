import Foundation
import GRDB
@_spi(StorageEngine) import PermissionLedger
import PermissionModel

/// The ledger as a Swift developer would build it on SQLite through GRDB: WAL mode with the same
/// durability (`synchronous = FULL`: every commit is on disk when it returns), the log in an `events`
/// table, and the same projections as tables, written in the same transaction as the events.
///
/// The very same rules (`Projector`) and event encoding drive it: only the storage differs. The as-of
/// queries are the SQL one would write: the latest version at or before a point with `ORDER BY seq DESC
/// LIMIT 1`, or `MAX(seq) … GROUP BY` over a subject's rows. It answers a subject's known handles
/// from the handles' versions alone, as that SQL does, where the ledger keeps each subject's handle sets.
final class SQLiteLedger {
    let path: String
    let queue: DatabaseQueue
    private(set) var head: LogHead

    static let schema = """
        CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, hash BLOB NOT NULL, record BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS event_ids (id TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS by_recorded_at (recorded_at INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (recorded_at, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS subjects (subject TEXT PRIMARY KEY, first_seq INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS subject_events (subject TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (subject, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS questions_by_asked (asked_at INTEGER NOT NULL, id BLOB NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (asked_at, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS questions (id BLOB NOT NULL, seq INTEGER NOT NULL, row BLOB NOT NULL, PRIMARY KEY (id, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS handles (subject TEXT NOT NULL, kind INTEGER NOT NULL, value TEXT NOT NULL, seq INTEGER NOT NULL, row BLOB NOT NULL,
            PRIMARY KEY (subject, kind, value, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS handle_subjects (kind INTEGER NOT NULL, value TEXT NOT NULL, subject TEXT NOT NULL, first_seq INTEGER NOT NULL,
            PRIMARY KEY (kind, value, subject)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS permissions (subject TEXT NOT NULL, permission TEXT NOT NULL, seq INTEGER NOT NULL, row BLOB NOT NULL,
            PRIMARY KEY (subject, permission, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS expiries (expires_at INTEGER NOT NULL, id BLOB NOT NULL, PRIMARY KEY (expires_at, id)) WITHOUT ROWID;
        """

    /// Every table derived from `events`: what a rebuild empties and fills again.
    static let derivedTables = ["event_ids", "by_recorded_at", "subjects", "subject_events", "questions_by_asked", "questions",
                                "handles", "handle_subjects", "permissions", "expiries"]

    /// Opens (creating) the database at `path`. `durable: false` skips the flush of each commit, for building
    /// large databases that are only queried.
    init(path: String, durable: Bool = true) throws {
        self.path = path
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = OFF")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write { db in try db.execute(sql: Self.schema) }
        head = try queue.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT seq, hash, record FROM events ORDER BY seq DESC LIMIT 1") else { return .empty }
            let record: Data = row["record"]
            let event = try record.withUnsafeBytes { try EventRecord.decode($0) }
            return LogHead(seq: UInt64(row["seq"] as Int64), hash: ChainHash(unchecked: [UInt8](row["hash"] as Data)), recordedAt: event.recordedAt)
        }
    }

    /// Appends `events` in one durable transaction, through the ledger's rules; all or nothing.
    @discardableResult
    func append(_ events: [PermissionEvent]) throws -> Int {
        var appended = 0
        let start = head
        do {
            head = try queue.write { db in
                let store = SQLiteStore(db)
                var projector = Projector(store: store, head: start)
                for event in events {
                    if case .appended = try projector.apply(event, clock: { event.recordedAt! }) { appended += 1 }
                }
                return projector.head
            }
        } catch {
            head = start
            throw error
        }
        return appended
    }

    /// Empties every derived table and derives them again from the log, checking its chain as it goes, in one
    /// durable transaction: what the ledger's `rebuildProjections()` does.
    func rebuildProjections() throws {
        head = try queue.write { db in
            for table in Self.derivedTables { try db.execute(sql: "DELETE FROM \(table)") }
            let store = SQLiteStore(db)
            store.rewritesLog = false
            var projector = Projector(store: store, head: .empty)
            let rows = try Row.fetchCursor(db, sql: "SELECT seq, hash, record FROM events ORDER BY seq")
            var previous = ChainHash.genesis
            while let row = try rows.next() {
                let record = [UInt8](row["record"] as Data)
                let hash = chainHash(previous: previous, record: record)
                guard hash.bytes.elementsEqual(row["hash"] as Data) else {
                    throw LedgerError(.damaged, "the chain hash does not match the event's bytes", seq: UInt64(row["seq"] as Int64))
                }
                previous = hash
                let event = try record.withUnsafeBytes { try EventRecord.decode($0) }
                _ = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record, storedHash: hash)
            }
            return projector.head
        }
    }

    /// The bytes the database takes on disk, after folding the write-ahead log into it.
    func bytesOnDisk() throws -> Int {
        try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        return ["", "-wal", "-shm"].reduce(0) { $0 + fileSize(path + $1) }
    }
}

// MARK: - Writing

/// The rules' view of the SQLite tables inside one write transaction.
final class SQLiteStore: ProjectionStore {
    private let db: Database
    /// Whether `storeEvent` appends to the log (false while rebuilding projections from it).
    var rewritesLog = true
    private var definitions: [UUID: QuestionDefinition] = [:]

    init(_ db: Database) { self.db = db }

    func seq(ofEventID id: String) throws -> UInt64? {
        // As the ledger's store: a rebuild replays a log that holds each id once (event_ids' key refuses a second).
        guard rewritesLog else { return nil }
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM event_ids WHERE id = ?"), arguments: [id]).map(UInt64.init)
    }

    func storedEvent(_ seq: UInt64) throws -> PermissionEvent {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT hash, record FROM events WHERE seq = ?"), arguments: [Int64(seq)]) else {
            throw EventRecord.DecodingError(reason: "seq \(seq) is indexed but missing from the log")
        }
        var event = try (row["record"] as Data).withUnsafeBytes { try EventRecord.decode($0) }
        event.seq = seq
        event.hash = ChainHash(unchecked: [UInt8](row["hash"] as Data))
        return event
    }

    func question(_ id: UUID) throws -> QuestionDefinition? {
        if let cached = definitions[id] { return cached }
        guard let data = try Data.fetchOne(db.cachedStatement(sql: "SELECT row FROM questions WHERE id = ? ORDER BY seq DESC LIMIT 1"),
                                           arguments: [id.data]) else { return nil }
        let row = try data.withUnsafeBytes { try QuestionRow(decoding: $0) }
        guard case .questionAsked(let question) = try storedEvent(row.askedSeq).payload else {
            throw EventRecord.DecodingError(reason: "seq \(row.askedSeq) is not the question.asked of \(id.uuidString)")
        }
        let definition = QuestionDefinition(question: question, row: row)
        remember(definition)
        return definition
    }

    func seq(ofLatestQuestionVersion id: UUID) throws -> UInt64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(seq) FROM questions WHERE id = ?"), arguments: [id.data]).map(UInt64.init)
    }

    func updateQuestion(_ id: UUID, row: QuestionRow, seq: UInt64) throws {
        try db.cachedStatement(sql: "INSERT INTO questions (id, seq, row) VALUES (?, ?, ?)").execute(arguments: [id.data, Int64(seq), Data(row.encoded())])
        definitions[id]?.row = row
        if row.state != .pending, let expiresAt = row.expiresAt {
            try db.cachedStatement(sql: "DELETE FROM expiries WHERE expires_at = ? AND id = ?").execute(arguments: [expiresAt.microseconds, id.data])
        }
    }

    func handle(subject: String, _ handle: CommunicationHandle) throws -> HandleRow? {
        let statement = try db.cachedStatement(sql: "SELECT row FROM handles WHERE subject = ? AND kind = ? AND value = ? ORDER BY seq DESC LIMIT 1")
        return try Data.fetchOne(statement, arguments: [subject, handle.kind.code, handle.value]).map { data in
            try data.withUnsafeBytes { try HandleRow(decoding: $0) }
        }
    }

    func putHandle(subject: String, _ row: HandleRow, seq: UInt64) throws {
        try db.cachedStatement(sql: "INSERT INTO handles (subject, kind, value, seq, row) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [subject, row.handle.kind.code, row.handle.value, Int64(seq), Data(row.encoded())])
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO handle_subjects (kind, value, subject, first_seq) VALUES (?, ?, ?, ?)")
            .execute(arguments: [row.handle.kind.code, row.handle.value, subject, Int64(seq)])
    }

    func putPermission(subject: String, _ row: PermissionRow, seq: UInt64) throws {
        try db.cachedStatement(sql: "INSERT INTO permissions (subject, permission, seq, row) VALUES (?, ?, ?, ?)")
            .execute(arguments: [subject, row.permission.rawValue, Int64(seq), Data(row.encoded())])
    }

    func isKnownSubject(_ subject: String) throws -> Bool {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM subjects WHERE subject = ?"), arguments: [subject]) != nil
    }

    /// Nothing: the SQL answers a subject's known handles from the handles' versions (one `GROUP BY`), with
    /// no table of whole sets.
    func endEvent(seq: UInt64) throws {}

    func storeEvent(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws {
        let s = Int64(seq)
        if rewritesLog {
            try db.cachedStatement(sql: "INSERT INTO events (seq, hash, record) VALUES (?, ?, ?)").execute(arguments: [s, Data(hash.bytes), Data(record)])
        }
        try db.cachedStatement(sql: "INSERT INTO event_ids (id, seq) VALUES (?, ?)").execute(arguments: [event.id, s])
        try db.cachedStatement(sql: "INSERT INTO by_recorded_at (recorded_at, seq) VALUES (?, ?)").execute(arguments: [event.recordedAt!.microseconds, s])
        try db.cachedStatement(sql: "INSERT INTO subject_events (subject, seq) VALUES (?, ?)").execute(arguments: [event.subject, s])
        if newSubject {
            try db.cachedStatement(sql: "INSERT INTO subjects (subject, first_seq) VALUES (?, ?)").execute(arguments: [event.subject, s])
        }
        if case .questionAsked(let question) = event.payload {
            let id = question.id.data
            try db.cachedStatement(sql: "INSERT INTO questions_by_asked (asked_at, id, seq) VALUES (?, ?, ?)")
                .execute(arguments: [event.occurredAt.microseconds, id, s])
            let row = QuestionRow(askedSeq: seq, subject: event.subject, askedAt: event.occurredAt, expiresAt: question.expiresAt, state: .pending)
            try db.cachedStatement(sql: "INSERT INTO questions (id, seq, row) VALUES (?, ?, ?)").execute(arguments: [id, s, Data(row.encoded())])
            if let expiresAt = question.expiresAt {
                try db.cachedStatement(sql: "INSERT INTO expiries (expires_at, id) VALUES (?, ?)").execute(arguments: [expiresAt.microseconds, id])
            }
            remember(QuestionDefinition(question: question, row: row))
        }
    }

    private func remember(_ definition: QuestionDefinition) {
        if definitions.count >= 200_000 { definitions.removeAll(keepingCapacity: true) }
        definitions[definition.question.id] = definition
    }
}

// MARK: - As-of queries

/// What an as-of query answers, reduced to plain values, so that the two engines' answers can be compared.
enum QueryAnswer: Equatable {
    case question(state: String, eventSeqs: [UInt64])
    case handles([String])
    case isKnown(Bool)
    case permissions([String])
}

extension SQLiteLedger {
    /// Calls `body` with the blob in the first column of each row, where SQLite holds it (not copied), as
    /// the ledger decodes rows where LMDB maps them.
    private static func eachBlob(_ statement: Statement, _ arguments: StatementArguments, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            try row.withUnsafeData(atIndex: 0) { data in
                guard let data else { throw EventRecord.DecodingError(reason: "a NULL blob") }
                try data.withUnsafeBytes { try body($0) }
            }
        }
    }

    /// The header of stored event `seq` (type, times, id), decoded as the ledger decodes one.
    private static func header(_ db: Database, seq: UInt64, id: Bool) throws -> EventRecord.Header {
        var header: EventRecord.Header?
        try eachBlob(db.cachedStatement(sql: "SELECT record FROM events WHERE seq = ?"), [Int64(seq)]) {
            header = try EventRecord.decodeHeader($0, id: id)
        }
        guard let header else { throw EventRecord.DecodingError(reason: "seq \(seq) is missing from the log") }
        return header
    }

    /// The `recordedAt` of event `seq`: the time of an as-of point (read from the event's header, as the ledger does).
    private static func time(_ db: Database, seq: UInt64) throws -> Int64 {
        try header(db, seq: seq, id: false).recordedAt.microseconds
    }

    /// A question's state and the seqs of its events as of `seq`; each event's header is read, as the ledger
    /// lists each event's type, id and times.
    func question(_ id: UUID, asOf seq: UInt64) throws -> QueryAnswer? {
        try queue.read { db in
            let versions = try Row.fetchAll(db.cachedStatement(sql: "SELECT seq, row FROM questions WHERE id = ? AND seq <= ? ORDER BY seq"),
                                            arguments: [id.data, Int64(seq)])
            guard let latest = versions.last else { return nil }
            let row = try (latest["row"] as Data).withUnsafeBytes { try QuestionRow(decoding: $0) }
            let store = SQLiteStore(db)
            guard case .questionAsked(let question) = try store.storedEvent(row.askedSeq).payload else { return nil }
            var state = row.state
            if state == .pending, let expiresAt = question.expiresAt, expiresAt.microseconds <= (try Self.time(db, seq: seq)) {
                state = .expired
            }
            var seqs: [UInt64] = []
            for version in versions {
                let versionSeq = UInt64(version["seq"] as Int64)
                _ = try Self.header(db, seq: versionSeq, id: true)
                seqs.append(versionSeq)
            }
            return .question(state: state.rawValue, eventSeqs: seqs)
        }
    }

    /// The handle rows the subject may talk to as of `seq`, ordered by kind and value as the ledger orders them.
    func knownHandles(subject: String, asOf seq: UInt64) throws -> [HandleRow] {
        try queue.read { db in
            let now = try Self.time(db, seq: seq)
            let statement = try db.cachedStatement(sql: """
                SELECT h.row FROM handles h
                JOIN (SELECT kind, value, MAX(seq) AS seq FROM handles WHERE subject = ?1 AND seq <= ?2 GROUP BY kind, value) latest
                  ON h.subject = ?1 AND h.kind = latest.kind AND h.value = latest.value AND h.seq = latest.seq
                """)
            var rows: [HandleRow] = []
            try Self.eachBlob(statement, [subject, Int64(seq)]) { bytes in
                let row = try HandleRow(decoding: bytes)
                if row.known && (row.until.map { $0.microseconds > now } ?? true) { rows.append(row) }
            }
            // Ordered in Swift: measured faster than `ORDER BY kind, value`, which sorts the join in a temporary B-tree.
            return rows.sorted { $0.handle < $1.handle }
        }
    }

    func isKnownHandle(_ handle: CommunicationHandle, subject: String, asOf seq: UInt64) throws -> Bool {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: "SELECT row FROM handles WHERE subject = ? AND kind = ? AND value = ? AND seq <= ? ORDER BY seq DESC LIMIT 1")
            var found: HandleRow?
            try Self.eachBlob(statement, [subject, handle.kind.code, handle.value, Int64(seq)]) { found = try HandleRow(decoding: $0) }
            guard let row = found else { return false }
            let now = try Self.time(db, seq: seq)
            return row.known && (row.until.map { $0.microseconds > now } ?? true)
        }
    }

    /// The latest row of each of the subject's permissions as of `seq`, by permission name as the ledger orders them.
    func permissions(subject: String, asOf seq: UInt64) throws -> [PermissionRow] {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT p.row FROM permissions p
                JOIN (SELECT permission, MAX(seq) AS seq FROM permissions WHERE subject = ?1 AND seq <= ?2 GROUP BY permission) latest
                  ON p.subject = ?1 AND p.permission = latest.permission AND p.seq = latest.seq
                """)
            var rows: [PermissionRow] = []
            try Self.eachBlob(statement, [subject, Int64(seq)]) { rows.append(try PermissionRow(decoding: $0)) }
            return rows.sorted { $0.permission < $1.permission }
        }
    }
}

extension UUID {
    /// The 16 bytes, as SQLite stores the id.
    var data: Data { withUnsafeBytes(of: uuid) { Data($0) } }
}

extension CommunicationHandle.Kind {
    /// The kind as a small integer column.
    var code: Int {
        switch self {
        case .phoneNumber: 1
        case .emailAddress: 2
        case .custom: 3
        }
    }
}
