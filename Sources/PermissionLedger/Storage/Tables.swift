import Foundation
internal import LMDB
import PermissionModel

/// The named databases of a ledger environment. See `docs/STORAGE.md`.
struct Tables: Sendable {
    /// `format` → the storage format version.
    let meta: Database
    /// seq (8 bytes, big-endian) → chain hash (32 bytes) followed by the event record.
    let events: Database
    /// event id (UTF-8) → seq.
    let eventIDs: Database
    /// recordedAt (8 bytes, sortable) + seq → empty: resolves an as-of time to a seq.
    let byRecordedAt: Database
    /// subject (UTF-8) → seq of its first event.
    let subjects: Database
    /// askedAt (8 bytes, sortable) + question id (16 bytes) → seq of the question.asked event.
    let questionsByAsked: Database
    /// question id + seq → ``QuestionRow``.
    let questions: Database
    /// subject NUL kind value NUL + seq → ``HandleRow``.
    let handles: Database
    /// subject NUL permission NUL + seq → ``PermissionRow``.
    let permissions: Database
    /// subject NUL + seq → empty: a subject's events, for history by subject.
    let subjectEvents: Database
    /// kind value NUL (as in `handles`) + subject → seq of the first row: which subjects a handle concerns.
    let handleSubjects: Database
    /// subject NUL + seq + kind value NUL → ``HandleRow``: each change of a subject's handles, in log order.
    let handleChanges: Database
    /// subject NUL + seq → ``HandleCheckpoint``: the subject's whole handle set after that event.
    let handleCheckpoints: Database
    /// expiresAt (8 bytes, sortable) + question id (16 bytes) → empty: the pending questions that have an
    /// `expiresAt`, soonest first, for expiry sweeps. Not versioned: it describes the head only.
    let expiries: Database

    static let names = [
        "meta", "events", "eventIDs", "byRecordedAt", "subjects", "questionsByAsked", "questions", "handles", "permissions",
        "subjectEvents", "handleSubjects", "handleChanges", "handleCheckpoints", "expiries",
    ]

    init(environment: Environment, create: Bool) throws {
        let dbs = try Self.names.map { try environment.openDatabase($0, create: create) }
        (meta, events, eventIDs, byRecordedAt, subjects, questionsByAsked, questions, handles, permissions) =
            (dbs[0], dbs[1], dbs[2], dbs[3], dbs[4], dbs[5], dbs[6], dbs[7], dbs[8])
        (subjectEvents, handleSubjects, handleChanges, handleCheckpoints, expiries) = (dbs[9], dbs[10], dbs[11], dbs[12], dbs[13])
    }

    func database(_ table: VersionedTable) -> Database {
        switch table {
        case .questions: questions
        case .handles: handles
        case .permissions: permissions
        }
    }

    /// Every table holding derived state, with its name: what `verify` compares against a rebuild.
    var derived: [(String, Database)] {
        [("eventIDs", eventIDs), ("byRecordedAt", byRecordedAt), ("subjects", subjects), ("questionsByAsked", questionsByAsked),
         ("questions", questions), ("handles", handles), ("permissions", permissions), ("subjectEvents", subjectEvents),
         ("handleSubjects", handleSubjects), ("handleChanges", handleChanges), ("handleCheckpoints", handleCheckpoints),
         ("expiries", expiries)]
    }
}
