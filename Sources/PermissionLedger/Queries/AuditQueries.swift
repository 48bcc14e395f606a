import Foundation
internal import LMDB
import PermissionModel

extension LedgerView {
    /// Another view of the same transaction at another point: both see the same snapshot of the log.
    public func at(_ asOf: AsOf) throws -> LedgerView {
        try LedgerView(txn: txn, tables: tables, asOf: asOf, now: now, head: head)
    }

    /// The first seq recorded at or after a point: `seq:N` is N itself, a time T the first event recorded at or after T.
    public func firstSeq(from asOf: AsOf) throws -> UInt64 {
        switch asOf {
        case .now: return head.seq + 1
        case .seq(let n): return n
        case .time(let t):
            let cursor = try txn.cursor(tables.byRecordedAt)
            guard let entry = try cursor.seek(atOrAfter: Keys.time(t)) else { return head.seq + 1 }
            return Keys.decodeSeq(entry.key)
        }
    }

    /// Calls `body` with the events in `seq` order between two seqs (both included), filtered.
    /// A question or subject filter reads that entity's index, not the whole log.
    public func history(
        subject: String? = nil, question: UUID? = nil, type: EventType? = nil,
        fromSeq: UInt64 = 1, toSeq: UInt64, _ body: (RecordedEvent) throws -> Void
    ) throws {
        let low = max(fromSeq, 1)
        guard low <= toSeq else { return }
        // The type is read from the record's header first: an event of another type is not opened, so that a
        // history of events without personal fields needs no key.
        func isOfAnotherType(_ value: UnsafeRawBufferPointer, seq: UInt64) throws -> Bool {
            guard let type else { return false }
            do {
                return try decodeStoredHeader(value, id: false).header.type != type
            } catch let error as EventRecord.DecodingError {
                throw LedgerError(.damaged, error.description, seq: seq)
            }
        }
        /// Gives the stored event at `seq` to `body` when it passes the filters; `value` is its stored value when
        /// the caller has read it already.
        func emit(_ seq: UInt64, value given: UnsafeRawBufferPointer? = nil) throws {
            guard let value = try given ?? txn.get(tables.events, key: Keys.seq(seq)) else {
                throw LedgerError(.damaged, "event missing from the log", seq: seq)
            }
            if try isOfAnotherType(value, seq: seq) { return }
            let event: PermissionEvent
            do {
                event = try decodeStoredEvent(value, seq: seq, txn: txn, tables: tables)
            } catch let error as EventRecord.DecodingError {
                throw LedgerError(.damaged, error.description, seq: seq)
            }
            if let subject, !event.subject.utf8.elementsEqual(subject.utf8) { return }
            if let question, event.questionID != question { return }
            try body(RecordedEvent(stored: event))
        }
        if let question {
            let prefix = Keys.uuid(question)
            let cursor = try txn.cursor(tables.questions)
            var entry = try cursor.seek(atOrAfter: prefix + Keys.seq(low))
            while let e = entry, e.key.count == 24, e.key.starts(with: prefix) {
                let seq = Keys.decodeSeq(e.key)
                if seq > toSeq { break }
                try emit(seq)
                entry = try cursor.next()
            }
        } else if let subject {
            let prefix = Keys.subjectPrefix(subject)
            let cursor = try txn.cursor(tables.subjectEvents)
            var entry = try cursor.seek(atOrAfter: prefix + Keys.seq(low))
            while let e = entry, e.key.count == prefix.count + 8, e.key.starts(with: prefix) {
                let seq = Keys.decodeSeq(e.key)
                if seq > toSeq { break }
                try emit(seq)
                entry = try cursor.next()
            }
        } else if type != nil {
            let cursor = try txn.cursor(tables.events)
            var entry = try cursor.seek(atOrAfter: Keys.seq(low))
            while let e = entry {
                let seq = Keys.decodeSeq(e.key)
                if seq > toSeq { break }
                try emit(seq, value: e.value)
                entry = try cursor.next()
            }
        } else {
            try forEachStoredEvent(after: low - 1, through: toSeq) { try body(RecordedEvent(stored: $0)) }
        }
    }

    /// Every version of what the ledger knew about `handle`, for every subject (or one), up to the point:
    /// which approvals made it known, which observations said known or not, and what ended each.
    public func handleRecords(_ handle: CommunicationHandle, subject: String? = nil) throws -> [HandleRecord] {
        // Each subject with the handle as its tables hold it: found through `handleSubjects` where they hold
        // values; where they hold tokens, which differ from subject to subject, by each subject's own token.
        var values = HandleValues(txn: txn, tables: tables)
        var subjects: [(subject: String, stored: CommunicationHandle)] = []
        if values.holdsTokens {
            for s in try subject.map({ [$0] }) ?? self.subjects() {
                if let stored = try values.stored(handle, subject: s) { subjects.append((s, stored)) }
            }
        } else {
            let prefix = Keys.handleOnly(handle)
            let index = try txn.cursor(tables.handleSubjects)
            var entry = try index.seek(atOrAfter: prefix)
            while let e = entry, e.key.starts(with: prefix) {
                if Keys.decodeSeq(e.value) <= point.seq, let s = validUTF8(UnsafeRawBufferPointer(rebasing: e.key[prefix.count...])) {
                    if subject == nil || s.utf8.elementsEqual(subject!.utf8) { subjects.append((s, handle)) }
                }
                entry = try index.next()
            }
        }
        var result: [HandleRecord] = []
        for (s, stored) in subjects {
            let entity = Keys.handle(subject: s, stored)
            let cursor = try txn.cursor(tables.handles)
            var versions: [(UInt64, HandleRow)] = []
            var row = try cursor.seek(atOrAfter: entity)
            while let e = row, e.key.count == entity.count + 8, e.key.starts(with: entity) {
                let seq = Keys.decodeSeq(e.key)
                if seq > point.seq { break }
                versions.append((seq, try HandleRow(decoding: e.value)))
                row = try cursor.next()
            }
            // Where the tables hold tokens, no index tells which subjects have the handle: a subject whose handle
            // sets hold it while its rows are missing has a damaged table, not an empty answer.
            if versions.isEmpty, values.holdsTokens,
               try HandleSets.sortedRows(txn, tables, subjectPrefix: Keys.subjectPrefix(s), atMost: point.seq).contains(where: { $0.handle == stored }) {
                throw LedgerError(.damaged, "the handles table lacks the rows of a handle that the handle sets of \(s) hold")
            }
            for (i, (seq, version)) in versions.enumerated() {
                var record = HandleRecord(
                    subject: s, handle: handle, seq: seq, known: version.known, since: version.since,
                    until: version.until, source: version.source, question: nil, ended: nil)
                if case .question(let id) = version.source { record.question = try question(id) }
                if version.known, let until = version.until, until <= point.time,
                   i + 1 == versions.count || versions[i + 1].1.since >= until {
                    record.ended = .init(cause: .lapse, at: until, seq: nil, knownAfter: false)
                } else if i + 1 < versions.count {
                    let (nextSeq, next) = versions[i + 1]
                    let cause: HandleRecord.Ending.Cause = if case .observation = next.source { .observation } else { .approval }
                    record.ended = .init(cause: cause, at: next.since, seq: nextSeq, knownAfter: next.known)
                }
                // A version written by an erased event is not matched by the value: that would say what it erased.
                if try values.isErased(version.source, subject: s) { continue }
                result.append(record)
            }
        }
        return result
    }

    /// Counts of events by type up to the point, subjects and questions by state at the point: a scan of the
    /// log up to the point (``Ledger/statistics(asOf:)`` runs it off the cooperative pool, with the sizes).
    package func statistics(sizes: LedgerStatistics.Sizes) throws -> LedgerStatistics {
        try statistics(sizes: sizes, cancellation: nil)
    }

    func statistics(sizes: LedgerStatistics.Sizes, cancellation: Cancellation?) throws -> LedgerStatistics {
        var byType: [EventType: UInt64] = [:]
        let cursor = try txn.cursor(tables.events)
        var entry = try cursor.first()
        while let e = entry, Keys.decodeSeq(e.key) <= point.seq {
            try cancellation?.check(every: cancellationInterval, Keys.decodeSeq(e.key))
            // The type tag is the record's second byte, after the 32-byte hash and the version byte.
            guard e.value.count > 33, let type = EventRecord.type(tag: e.value[33]) else {
                throw LedgerError(.damaged, "unknown event type", seq: Keys.decodeSeq(e.key))
            }
            byType[type, default: 0] += 1
            entry = try cursor.next()
        }
        return LedgerStatistics(
            head: head, point: point, eventsByType: byType, subjects: try subjects().count, questionsByState: try questionStates(),
            sizes: sizes)
    }

    /// How many questions are in each state at the point, as ``questions(subject:state:)`` would count them, read
    /// with no key: a question's state is in its row, and its expiry in the clear part of its `question.asked`.
    private func questionStates() throws -> [QuestionState: Int] {
        var byState: [QuestionState: Int] = [:]
        try forEachQuestionRow { id, row, _ in
            var state = row.state
            if state == .pending {
                guard let value = try txn.get(tables.events, key: Keys.seq(row.askedSeq)) else {
                    throw LedgerError(.damaged, "question \(id.uuidString) points at an event missing from the log", seq: row.askedSeq)
                }
                let asked: PermissionEvent
                do {
                    // As a rebuild reads it, with no key: its handles as tokens, its expiry in the clear.
                    asked = try replayedEvent(try storedParts(value).record).event
                } catch let error as EventRecord.DecodingError {
                    throw LedgerError(.damaged, error.description, seq: row.askedSeq)
                }
                guard case .questionAsked(let question) = asked.payload else {
                    throw LedgerError(.damaged, "question \(id.uuidString) points at an event that is not its question.asked", seq: row.askedSeq)
                }
                if let expiresAt = question.expiresAt, expiresAt <= point.time { state = .expired }
            }
            byState[state, default: 0] += 1
        }
        return byState
    }

    /// What changed between this view's point and a later one (or an earlier one): question states,
    /// known handles and permission states, for one subject or all.
    public func diff(to other: LedgerView, subject: String? = nil) throws -> LedgerDiff {
        let beforeList = try questions(subject: subject)
        let afterList = try other.questions(subject: subject)
        let before = Dictionary(uniqueKeysWithValues: beforeList.map { ($0.question.id, $0) })
        let after = Dictionary(uniqueKeysWithValues: afterList.map { ($0.question.id, $0) })
        var questionChanges: [LedgerDiff.QuestionChange] = []
        for q in afterList where before[q.question.id]?.state != q.state {
            questionChanges.append(.init(id: q.question.id, subject: q.subject, from: before[q.question.id]?.state, to: q.state))
        }
        // When the second point is the earlier one, questions asked in between exist only at the first.
        for q in beforeList where after[q.question.id] == nil {
            questionChanges.append(.init(id: q.question.id, subject: q.subject, from: q.state, to: nil))
        }
        var added: [LedgerDiff.HandleChange] = []
        var removed: [LedgerDiff.HandleChange] = []
        var permissionChanges: [LedgerDiff.PermissionChange] = []
        var subjects: [String]
        if let subject {
            subjects = [subject]
        } else {
            subjects = Array(Set(try self.subjects()).union(try other.subjects()))
            subjects.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
        for s in subjects {
            // Handles compared as stored: erased ones, whose values are gone, are told apart by their tokens.
            let old = try knownHandles(subject: s, identities: true)
            let new = try other.knownHandles(subject: s, identities: true)
            let oldSet = Set(old.identities)
            let newSet = Set(new.identities)
            added += zip(new.handles, new.identities).filter { !oldSet.contains($0.1) }.map { .init(subject: s, handle: $0.0) }
            removed += zip(old.handles, old.identities).filter { !newSet.contains($0.1) }.map { .init(subject: s, handle: $0.0) }
            let oldPermissions = Dictionary(uniqueKeysWithValues: try permissions(subject: s).map { ($0.permission, $0.state) })
            let newPermissions = Dictionary(uniqueKeysWithValues: try other.permissions(subject: s).map { ($0.permission, $0.state) })
            for permission in Set(oldPermissions.keys).union(newPermissions.keys).sorted()
            where oldPermissions[permission] != newPermissions[permission] {
                permissionChanges.append(.init(subject: s, permission: permission, from: oldPermissions[permission], to: newPermissions[permission]))
            }
        }
        return LedgerDiff(from: point, to: other.point, questions: questionChanges, handlesAdded: added, handlesRemoved: removed,
                          permissions: permissionChanges)
    }
}
