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
    private var recorded: [StorageTable: [([UInt8], [UInt8])]] = [:]
    /// The keys of the `expiries` table: rows there are deleted as well as written.
    private var expiries: Set<ByteKey> = []

    /// Every row the derived tables hold, per table, as LMDB would hold it (only when `keepsRows`).
    var rows: [StorageTable: [([UInt8], [UInt8])]] {
        var rows = recorded
        if keepsRows { rows[.expiries] = expiries.map { ($0.bytes, []) } }
        return rows
    }
    /// A subject's entity, compared by the subject's bytes as LMDB keys are.
    private struct SubjectKey<T: Hashable>: Hashable {
        var subject: ByteKey
        var item: T

        init(subject: String, item: T) {
            self.subject = ByteKey(Array(subject.utf8))
            self.item = item
        }
    }
    private var handles: [SubjectKey<CommunicationHandle>: HandleRow] = [:]
    private var permissions: [SubjectKey<SystemPermission>: PermissionRow] = [:]
    private var questions: [UUID: (definition: QuestionDefinition, seq: UInt64)] = [:]
    private var eventIDs: [ByteKey: UInt64] = [:]
    /// The records of stored events, kept when `keepsEvents`, decoded only for a duplicate, as LMDB's are.
    private var records: [UInt64: [UInt8]] = [:]
    private var subjects: Set<ByteKey> = []
    /// Per subject, when keeping rows: every handle's latest row and the changes since the last checkpoint.
    private var handleSets: [ByteKey: (rows: [ByteKey: HandleRow], changes: Int)] = [:]
    private var touchedSubjects: [ByteKey] = []

    init(keepsRows: Bool, keepsEvents: Bool = false) {
        self.keepsRows = keepsRows
        self.keepsEvents = keepsRows || keepsEvents
    }

    private func record(_ table: StorageTable, _ key: @autoclosure () -> [UInt8], _ value: @autoclosure () -> [UInt8]) {
        if keepsRows { recorded[table, default: []].append((key(), value())) }
    }

    func seq(ofEventID id: String) throws -> UInt64? { eventIDs[ByteKey(Array(id.utf8))] }

    func storedEvent(_ seq: UInt64) throws -> PermissionEvent {
        guard let record = records[seq] else { throw EventRecord.DecodingError(reason: "seq \(seq) not replayed") }
        return try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
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
        handles[SubjectKey(subject: subject, item: handle)]
    }

    func putHandle(subject: String, _ row: HandleRow, seq: UInt64) throws {
        let key = SubjectKey(subject: subject, item: row.handle)
        if keepsRows {
            if handles[key] == nil { record(.handleSubjects, Keys.handleSubject(row.handle, subject: subject), Keys.seq(seq)) }
            let subjectKey = ByteKey(Keys.subjectPrefix(subject))
            let handleKey = ByteKey(Keys.handleOnly(row.handle))
            record(.handleChanges, Keys.handleChange(subject: subject, seq: seq, row.handle), row.encoded())
            handleSets[subjectKey, default: ([:], 0)].rows[handleKey] = row
            handleSets[subjectKey]!.changes += 1
            if !touchedSubjects.contains(subjectKey) { touchedSubjects.append(subjectKey) }
        }
        handles[key] = row
        record(.handles, Keys.versioned(Keys.handle(subject: subject, row.handle), seq), row.encoded())
    }

    func putPermission(subject: String, _ row: PermissionRow, seq: UInt64) throws {
        permissions[SubjectKey(subject: subject, item: row.permission)] = row
        record(.permissions, Keys.versioned(Keys.permission(subject: subject, row.permission), seq), row.encoded())
    }

    func isKnownSubject(_ subject: String) throws -> Bool { subjects.contains(ByteKey(Array(subject.utf8))) }

    func endEvent(seq: UInt64) throws {
        for subject in touchedSubjects where handleSets[subject]!.changes >= HandleCheckpoint.interval {
            record(.handleCheckpoints, Keys.versioned(subject.bytes, seq), HandleCheckpoint.encode(handleSets[subject]!.rows.map { ($0.key, $0.value) }))
            handleSets[subject]!.changes = 0
        }
        touchedSubjects.removeAll(keepingCapacity: true)
    }

    func storeEvent(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws {
        eventIDs[ByteKey(Array(event.id.utf8))] = seq
        // Only duplicates consult stored events, and a log replay holds none: keep them only when asked.
        if keepsEvents { records[seq] = record }
        let seqKey = Keys.seq(seq)
        self.record(.eventIDs, Array(event.id.utf8), seqKey)
        self.record(.byRecordedAt, Keys.versioned(Keys.time(event.recordedAt!), seq), [])
        self.record(.subjectEvents, Keys.versioned(Keys.subjectPrefix(event.subject), seq), [])
        if newSubject {
            subjects.insert(ByteKey(Array(event.subject.utf8)))
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
