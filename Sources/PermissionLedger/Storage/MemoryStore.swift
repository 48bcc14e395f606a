import Foundation
internal import LMDB
import PermissionModel

/// The projection store in memory: the fastest way to replay a log into current state, and (with
/// `keepsRows`) every row a rebuild implies, encoded as LMDB holds it, to compare with the kept projections.
final class MemoryStore: ProjectionStore {
    let keepsRows: Bool
    /// Whether events are kept to tell a duplicate from a reused id: a log replay never needs them.
    let keepsEvents: Bool
    /// Every row written, per table, as LMDB would hold it (only when `keepsRows`).
    private var recorded: [StorageTable: RecordedRows] = [:]
    /// The keys of the `expiries` table: rows there are deleted as well as written.
    private var expiries: Set<ByteKey> = []

    /// Hands over the rows `table` holds, ordered by key as LMDB orders them (only when `keepsRows`), and
    /// forgets them: a verification compares each table once, and holds one table's order at a time.
    func takeSortedRows(_ table: StorageTable) -> RecordedRows {
        var rows = recorded.removeValue(forKey: table) ?? RecordedRows()
        if table == .expiries {
            for key in expiries { rows.append(key: key.bytes, value: []) }
            expiries = []
        }
        rows.sortByKey()
        return rows
    }

    /// Each subject's number, in the order subjects first had an event (subjects compared by their bytes, as
    /// LMDB keys are): the current handles and permissions are keyed by it rather than by the subject's bytes.
    private var subjectNumbers: [ByteKey: Int] = [:]
    /// One entity of one subject.
    private struct SubjectEntity<T: Hashable>: Hashable {
        var subject: Int
        var item: T
    }
    /// Each subject's handles (by its number): every handle's latest row.
    private var handles: [[CommunicationHandle: HandleRow]] = []
    /// When keeping rows: where each subject's `handleSets` records stand, with the places in
    /// `recorded[.handleSets]` of its latest whole set (if any) and of the change records since, in log order.
    private var handleSetStates: [Int: (state: HandleSetState, records: [Int])] = [:]
    /// When keeping rows: the handle rows the event being written changed, in the order written, per subject
    /// (its number, with its key prefix).
    private var eventHandleRows: [(subject: Int, prefix: [UInt8], rows: [HandleRow])] = []
    private var permissions: [SubjectEntity<SystemPermission>: PermissionRow] = [:]
    private var questions: [UUID: (definition: QuestionDefinition, seq: UInt64)] = [:]
    private var eventIDs: [ByteKey: UInt64] = [:]
    /// The records of stored events, kept when `keepsEvents`, decoded only for a duplicate, as LMDB's are.
    private var records: [UInt64: [UInt8]] = [:]

    init(keepsRows: Bool, keepsEvents: Bool = false) {
        self.keepsRows = keepsRows
        self.keepsEvents = keepsRows || keepsEvents
    }

    private func record(_ table: StorageTable, _ key: @autoclosure () -> [UInt8], _ value: @autoclosure () -> [UInt8]) {
        if keepsRows { recorded[table, default: RecordedRows()].append(key: key(), value: value()) }
    }

    /// The subject's number; a subject with no event yet (which the rules never write rows for) gets one.
    private func number(of subject: String) -> Int {
        let key = ByteKey(Array(subject.utf8))
        if let number = subjectNumbers[key] { return number }
        let number = subjectNumbers.count
        subjectNumbers[key] = number
        handles.append([:])
        return number
    }

    func seq(ofEventID id: String) throws -> UInt64? { eventIDs[ByteKey(Array(id.utf8))] }


    func storedEvent(_ seq: UInt64) throws -> PermissionEvent {
        guard let record = records[seq] else { throw EventRecord.DecodingError(reason: "seq \(seq) not replayed") }
        return try replayedEvent(record)
    }

    func question(_ id: UUID) throws -> QuestionDefinition? { questions[id]?.definition }

    func seq(ofLatestQuestionVersion id: UUID) throws -> UInt64? { questions[id]?.seq }

    func updateQuestion(_ id: UUID, row: QuestionRow, seq: UInt64) throws {
        questions[id]?.definition.row = row
        questions[id]?.seq = seq
        record(.questions, Keys.versioned(Keys.uuid(id), seq), row.encoded())
        if keepsRows, row.state != .pending, let expiresAt = row.expiresAt {
            expiries.remove(ByteKey(Keys.expiry(expiresAt, question: id)))
        }
    }

    func handle(subject: String, _ handle: CommunicationHandle) throws -> HandleRow? {
        guard let number = subjectNumbers[ByteKey(Array(subject.utf8))] else { return nil }
        return handles[number][handle]
    }

    func putHandle(subject: String, _ row: HandleRow, seq: UInt64) throws {
        let number = number(of: subject)
        let isNew = handles[number].updateValue(row, forKey: row.handle) == nil
        guard keepsRows else { return }
        if isNew { record(.handleSubjects, Keys.handleSubject(row.handle, subject: subject), Keys.seq(seq)) }
        record(.handles, Keys.versioned(Keys.handle(subject: subject, row.handle), seq), row.encoded())
        if let index = eventHandleRows.firstIndex(where: { $0.subject == number }) {
            eventHandleRows[index].rows.append(row)
        } else {
            eventHandleRows.append((number, Keys.subjectPrefix(subject), [row]))
        }
    }

    /// Records the event's changes of each subject's handle set as ``LMDBStore/endEvent(seq:)`` does, a whole
    /// set made the same way: from the records since the latest whole set, decoded from what was recorded.
    func endEvent(seq: UInt64) throws {
        guard keepsRows, !eventHandleRows.isEmpty else { return }
        for (number, prefix, changed) in eventHandleRows {
            var (state, records) = handleSetStates[number] ?? (HandleSetState(), [])
            let record = try HandleSets.record(changed: changed, state: &state) {
                var whole: [HandleRow] = []
                var changes: [[HandleRow]] = []
                for index in records {
                    let value = recorded[.handleSets]!.row(index).value
                    let decoded = try value.withUnsafeBytes { try HandleSetRecord(decoding: $0) }
                    if decoded.isWhole { whole = decoded.rows } else { changes.append(decoded.rows) }
                }
                return HandleSets.merging(whole, changeRecords: changes)
            }
            if record.isWhole { records = [] }
            records.append(recorded[.handleSets]?.count ?? 0)
            self.record(.handleSets, Keys.versioned(prefix, seq), record.encoded())
            handleSetStates[number] = (state, records)
        }
        eventHandleRows.removeAll(keepingCapacity: true)
    }

    func putPermission(subject: String, _ row: PermissionRow, seq: UInt64) throws {
        permissions[SubjectEntity(subject: number(of: subject), item: row.permission)] = row
        record(.permissions, Keys.versioned(Keys.permission(subject: subject, row.permission), seq), row.encoded())
    }

    func isKnownSubject(_ subject: String) throws -> Bool { subjectNumbers[ByteKey(Array(subject.utf8))] != nil }

    /// When keeping rows: the right edge of the Merkle tree, and each subject's latest seq, which its next leaf names.
    private var treeAppender = TreeAppender()
    private var latestSeqOfSubject: [ByteKey: UInt64] = [:]

    func storeEvent(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws {
        if keepsRows {
            let subject = ByteKey(Array(event.subject.utf8))
            let previous = latestSeqOfSubject.updateValue(seq, forKey: subject)
            let data = try LeafData.of(storedRecord: record, seq: seq, subjectPrevious: { _ in previous })
            if let data {
                let entry = treeAppender.entry(leaf: .leaf(data), seq: seq) { level, index in
                    preconditionFailure("a replay from the first event makes every subtree before \(seq) itself")
                }
                self.record(.tree, Keys.seq(seq), entry)
                for (key, hash) in StoredTree.upperRows(of: entry, seq: seq) { self.record(.treeTop, key, Array(hash)) }
            }
        }
        eventIDs[ByteKey(Array(event.id.utf8))] = seq
        // Only duplicates consult stored events, and a log replay holds none: keep them only when asked.
        if keepsEvents { records[seq] = record }
        let seqKey = Keys.seq(seq)
        self.record(.eventIDs, Array(event.id.utf8), seqKey)
        self.record(.byRecordedAt, Keys.versioned(Keys.time(event.recordedAt!), seq), [])
        self.record(.subjectEvents, Keys.versioned(Keys.subjectPrefix(event.subject), seq), [])
        if newSubject {
            _ = number(of: event.subject)
            self.record(.subjects, Array(event.subject.utf8), seqKey)
        }
        if case .questionAsked(let question) = event.payload {
            self.record(.questionsByAsked, Keys.asked(event.occurredAt, question: question.id), seqKey)
            let row = QuestionRow(askedSeq: seq, subject: event.subject, askedAt: event.occurredAt, expiresAt: question.expiresAt, state: .pending)
            questions[question.id] = (QuestionDefinition(question: question, row: row), seq)
            self.record(.questions, Keys.versioned(Keys.uuid(question.id), seq), row.encoded())
            if keepsRows, let expiresAt = question.expiresAt {
                expiries.insert(ByteKey(Keys.expiry(expiresAt, question: question.id)))
            }
        }
    }

    /// How many questions were replayed.
    var questionCount: Int { questions.count }
}
