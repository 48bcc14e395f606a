import Foundation
import PermissionModel

extension Ledger {
    /// Appends `question.expired` for every pending question whose `expiresAt` is at or before `now`
    /// (the ledger's clock by default), and returns the ids of the questions this call expired.
    ///
    /// Safe to run from a timer, in several processes at once: each expiry event has an id derived from
    /// its question (`expired:<question id>`) and occurs at the question's `expiresAt`, so a question
    /// expired by another sweep meanwhile is a no-op, and one answered meanwhile is skipped. Finding the
    /// overdue questions reads an index of pending questions by `expiresAt`: its cost grows with the
    /// questions it expires, not with the ledger.
    ///
    /// - Parameters:
    ///   - now: the time to expire questions by; `nil` (the default) uses the ledger's clock. A time
    ///     later than the clock records expiries that occur after they are recorded: meant for tests.
    ///   - limit: the most overdue questions one call looks at; with more, call again until it returns
    ///     no ids (another process's sweep may have expired some of them first).
    @discardableResult
    public func expireOverdueQuestions(now: Timestamp? = nil, limit: Int = 10_000) async throws -> [UUID] {
        let now = now ?? options.clock()
        let overdue = try read(retries: Self.readRetries) { view in try view.overdueQuestions(now: now, limit: limit) }
        return try await withThrowingTaskGroup(of: UUID?.self) { group in
            for (id, subject, expiresAt) in overdue {
                let event = PermissionEvent(
                    id: SubjectLedger.eventID("expired", id), subject: subject, occurredAt: expiresAt,
                    payload: .questionExpired(questionID: id))
                group.addTask {
                    do {
                        guard case .appended = try await self.append(event) else { return nil }
                        return id
                    } catch is AppendRejected {
                        // Answered, canceled or expired differently since the index was read.
                        return nil
                    }
                }
            }
            var expired: [UUID] = []
            for try await id in group { if let id { expired.append(id) } }
            return expired.sorted { $0.uuidString < $1.uuidString }
        }
    }
}

extension LedgerView {
    /// Pending questions whose `expiresAt` is at or before `now`, soonest first (read at the head).
    func overdueQuestions(now: Timestamp, limit: Int) throws -> [(id: UUID, subject: String, expiresAt: Timestamp)] {
        var result: [(UUID, String, Timestamp)] = []
        let cursor = try txn.cursor(tables.expiries)
        let rows = try txn.cursor(tables.questions)
        var entry = try cursor.first()
        while let e = entry, result.count < limit, e.key.count == 24 {
            let id = Keys.decodeUUID(UnsafeRawBufferPointer(rebasing: e.key[8..<24]))
            guard let latest = try rows.latest(Keys.uuid(id), atMost: .max) else {
                throw LedgerError(.damaged, "the expiry index names question \(id.uuidString), which is not in the ledger")
            }
            let row = try QuestionRow(decoding: latest.value)
            guard let expiresAt = row.expiresAt, expiresAt <= now else { break }
            if row.state == .pending { result.append((id, row.subject, expiresAt)) }
            entry = try cursor.next()
        }
        return result
    }
}
