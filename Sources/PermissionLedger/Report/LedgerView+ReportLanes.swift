import Foundation
internal import LMDB
import PermissionModel

extension LedgerView {
    /// Every contact of `subject` the ledger holds rows for up to the point, with the intervals in which it was
    /// known, read from the versions of its rows in the `handles` table (what `known-handles` and `who-approved`
    /// read), and the questions of `questions` about it as marks.
    ///
    /// Readable contacts come first, in the order `known-handles` lists them; then erased ones, by first `seq`.
    func contactLanes(subject: String, questions: [QuestionStatus]) throws -> [ContactLane] {
        var values = HandleValues(txn: txn, tables: tables)
        let prefix = Keys.subjectPrefix(subject)
        let cursor = try txn.cursor(tables.handles)
        // The versions of each handle, as the tables hold it (a token where they hold tokens), in key order.
        var versions: [(stored: CommunicationHandle, rows: [(seq: UInt64, row: HandleRow)])] = []
        var entry = try cursor.seek(atOrAfter: prefix)
        while let e = entry, e.key.starts(with: prefix) {
            let seq = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key.suffix(8)))
            if seq <= point.seq {
                let row = try HandleRow(decoding: e.value)
                if versions.last?.stored == row.handle {
                    versions[versions.count - 1].rows.append((seq, row))
                } else {
                    versions.append((row.handle, [(seq, row)]))
                }
            }
            entry = try cursor.next()
        }
        let via = Dictionary(questions.map { ($0.question.id, $0.via) }, uniquingKeysWith: { first, _ in first })
        var lanes: [(stored: CommunicationHandle, lane: ContactLane)] = []
        for (stored, rows) in versions {
            var intervals: [KnownInterval] = []
            var readable: CommunicationHandle?
            var lastErasure: ErasureMark?
            for (i, (seq, row)) in rows.enumerated() {
                let (handle, erased) = try values.value(of: stored, source: row.source, subject: subject)
                if let erased { lastErasure = erased } else { readable = handle }
                guard row.known else { continue }
                let next = i + 1 < rows.count ? rows[i + 1].row.since : nil
                var end = next
                var lapsed = false
                if let until = row.until, until <= point.time, next.map({ until <= $0 }) ?? true {
                    end = until
                    lapsed = true
                }
                let source: KnownInterval.Source
                var question: UUID?
                switch row.source {
                case .observation:
                    source = .observation
                case .question(let id):
                    question = id
                    switch via[id] ?? nil {
                    case .inPerson: source = .inPerson
                    case .default: source = .byDefault
                    case .messages, nil: source = .messages
                    }
                }
                intervals.append(KnownInterval(
                    start: row.since, end: end.map { max($0, row.since) }, source: source, seq: seq, question: question,
                    until: row.until, lapsed: lapsed, erased: erased))
            }
            let shown: Erasable<CommunicationHandle> = readable.map { .readable($0) } ?? lastErasure.map { .erased($0) }
                ?? .readable(stored)
            lanes.append((stored, ContactLane(handle: shown, kind: stored.kind, intervals: intervals, marks: [])))
        }
        // Each question's marks go on the lanes of the contacts it names, found as the tables hold them.
        let laneIndex = Dictionary(lanes.enumerated().map { ($0.element.stored, $0.offset) }, uniquingKeysWith: { first, _ in first })
        for status in questions {
            for handle in status.handles {
                guard case .readable(let value) = handle, let stored = try values.stored(value, subject: subject),
                      let index = laneIndex[stored] else { continue }
                lanes[index].lane.marks.append(QuestionMark(
                    question: status.question.id, askedAt: status.askedAt, state: status.state,
                    resolvedAt: status.resolvedAt, late: status.late))
            }
        }
        var result = lanes.map(\.lane)
        for i in result.indices { result[i].marks.sort { ($0.askedAt, $0.question.uuidString) < ($1.askedAt, $1.question.uuidString) } }
        return result.sorted { a, b in
            switch (a.handle, b.handle) {
            case (.readable(let x), .readable(let y)): return x < y
            case (.readable, .erased): return true
            case (.erased, .readable): return false
            case (.erased, .erased): return (a.intervals.first?.seq ?? 0) < (b.intervals.first?.seq ?? 0)
            }
        }
    }

    /// Every system permission of `subject` changed up to the point, by name, with its states over time.
    func permissionLanes(subject: String) throws -> [PermissionLane] {
        let prefix = Keys.subjectPrefix(subject)
        let cursor = try txn.cursor(tables.permissions)
        var lanes: [PermissionLane] = []
        var entry = try cursor.seek(atOrAfter: prefix)
        while let e = entry, e.key.starts(with: prefix) {
            let seq = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key.suffix(8)))
            if seq <= point.seq {
                let row = try PermissionRow(decoding: e.value)
                let interval = PermissionInterval(state: row.state, cause: row.cause, start: row.since, end: nil, seq: seq)
                if lanes.last?.permission == row.permission {
                    let last = lanes[lanes.count - 1].intervals.count - 1
                    lanes[lanes.count - 1].intervals[last].end = max(row.since, lanes[lanes.count - 1].intervals[last].start)
                    lanes[lanes.count - 1].intervals.append(interval)
                } else {
                    lanes.append(PermissionLane(permission: row.permission, intervals: [interval]))
                }
            }
            entry = try cursor.next()
        }
        return lanes
    }
}
