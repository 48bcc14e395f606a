import Foundation
import PermissionModel

/// The acceptance rules of docs/spec/EVENTS.md and the projections they drive, applied one event at a time.
@_spi(StorageEngine) public struct Projector<Store: ProjectionStore> {
    public let store: Store
    public var head: LogHead
    /// Whether events appended (not replayed) meet the text rules of events appended from now on (docs/spec/EVENTS.md,
    /// "Text"); `false` for events carried over from another ledger's log, which meet those of stored events.
    var checksAppendedText = true

    public init(store: Store, head: LogHead) {
        self.store = store
        self.head = head
    }

    /// What an accepted event changes besides the log, worked out before anything is written.
    private enum Plan {
        case none
        case question(UUID, QuestionRow)
        case answer(UUID, QuestionRow, approved: [CommunicationHandle], until: Timestamp?)
        case observed(checked: [CommunicationHandle], known: [CommunicationHandle])
        case permission(PermissionRow)
        case erasure(Erasure)
    }

    /// Checks `event` against the current state and, when it is accepted, stores it and updates every projection.
    ///
    /// - Parameters:
    ///   - clock: assigns `recordedAt` when the event has none.
    ///   - storedRecord: when replaying the log, the event's stored bytes, so they are hashed as stored
    ///     instead of being encoded again.
    ///   - storedHash: when replaying the log, the chain hash of `storedRecord` after the head's hash, which
    ///     the caller computed when it checked the stored chain: it is taken instead of being computed again.
    /// - Throws: ``EventRejection`` when a rule rejects the event (nothing was written for it);
    ///   storage errors as they come.
    public mutating func apply(
        _ offered: consuming PermissionEvent, clock: () -> Timestamp, storedRecord: [UInt8]? = nil, storedHash: ChainHash? = nil
    ) throws -> AppendOutcome {
        // One value, checked and then completed in place: a copy of an event retains each of its fields.
        var input = offered
        let type = input.type.rawValue
        func reject(_ reason: String) -> EventRejection { EventRejection(reason, eventType: type) }
        // An erased event (an import of one) is known by its handles' tokens: the rules compare those.
        if let fields = input.erasedFields, storedRecord == nil {
            let handles = SealedRecord.handles(of: input)
            guard fields.commitment.count == SealedFields.commitmentSize, fields.tokens.count == handles.count,
                  fields.tokens.allSatisfy({ $0.count == DataKeys.tokenSize }) else {
                throw reject("erased: the event has \(handles.count) handles and \(fields.tokens.count) tokens; each token is \(DataKeys.tokenSize) bytes and the commitment \(SealedFields.commitmentSize)")
            }
            var tokens = fields.tokens.makeIterator()
            input = SealedRecord.replacingHandles(of: input) { DataKeys.markedTokenHandle(kind: $0.kind, token: tokens.next()!) }
        }
        // Events made in Swift meet the same rules as those read from JSON Lines.
        try Self.checkShape(&input, appending: storedRecord == nil && checksAppendedText, reject: reject)

        if let existing = try store.seq(ofEventID: input.id) {
            let stored = try store.storedEvent(existing)
            // Compared as stored, byte for byte, without what the ledger assigns (`recordedAt`, `seq`, `hash`):
            // `==` on the decoded events would compare text as Swift strings, to which two spellings of the same
            // accented letter are equal, so a reused id with a subject spelled otherwise would pass for a duplicate.
            // An erased event is compared by what is left of it: its envelope.
            let erased = stored.erased != nil || input.erasedFields != nil
            guard erased
                ? SealedRecord.chainedBytes(stored, recordedAt: .earliest, commitment: nil) == SealedRecord.chainedBytes(input, recordedAt: .earliest, commitment: nil)
                : EventRecord.encode(stored, recordedAt: .earliest) == EventRecord.encode(input, recordedAt: .earliest) else {
                throw reject("event id \(quoted(input.id)) is already used by seq \(existing) for a different event")
            }
            return .duplicate(of: existing)
        }
        let recordedAt: Timestamp
        if let given = input.recordedAt {
            // A response delivered again is a no-op (docs/spec/EVENTS.md) before it is an event out of order: its
            // `recordedAt` may well be older than the head's, as a redelivered event's may (`Idempotency comes
            // first` in docs/DECISIONS.md).
            if let previous = head.recordedAt, given < previous {
                if let repeated = try repeatedAnswer(input) { return .duplicate(of: repeated) }
                throw reject("recordedAt \(given) is earlier than the previous event's \(previous); recordedAt never decreases along the log")
            }
            recordedAt = given
        } else {
            recordedAt = max(clock(), head.recordedAt ?? .earliest)
        }
        let seq = head.seq + 1

        // Validate against state and work out what to project, before writing anything.
        let plan: Plan
        switch input.payload {
        case .questionAsked(let question):
            if let existing = try store.question(question.id) {
                throw reject("question \(question.id.uuidString) was already asked at seq \(existing.row.askedSeq)")
            }
            plan = .none
        case .questionSendCanceled(let id), .questionExpired(let id):
            var row = try pendingQuestion(id, event: input, reject: reject).row
            if case .questionSendCanceled = input.payload {
                row.state = .canceled
            } else {
                row.state = .expired
                row.expiredByEvent = true
            }
            row.resolvedAt = input.occurredAt
            plan = .question(id, row)
        case .questionAskFailed(let id, let error):
            var row = try pendingQuestion(id, event: input, reject: reject).row
            row.state = .failed
            row.error = error
            row.resolvedAt = input.occurredAt
            plan = .question(id, row)
        case .questionAnswered(let id, let choiceID, let via):
            let definition = try knownQuestion(id, event: input, reject: reject)
            let question = definition.question
            var row = definition.row
            guard let choice = question.choice(id: choiceID) else {
                throw reject("choice \(quoted(choiceID)) is not one of question \(id.uuidString): \(shownList(question.choices.map(\.id)))")
            }
            switch row.state {
            case .approved, .denied:
                if let repeated = try repeatedAnswer(input) { return .duplicate(of: repeated) }
                throw reject("question \(id.uuidString) was already answered with \(quoted(row.choiceID ?? "")); a different answer (\(quoted(choiceID))) conflicts")
            case .canceled:
                throw reject("question \(id.uuidString) was canceled before it was sent, so it cannot be answered")
            case .failed:
                throw reject("question \(id.uuidString) failed to send (\(row.error?.code.rawValue ?? "unknown")), so it cannot be answered")
            case .pending, .expired:
                break
            }
            if let expiresAt = question.expiresAt, input.occurredAt >= expiresAt {
                throw reject("answer occurred at \(input.occurredAt), at or after the question's expiresAt \(expiresAt); an expired question cannot be answered")
            }
            row.state = choice.answer == .approval ? .approved : .denied
            row.late = row.expiredByEvent || question.expiresAt.map { recordedAt >= $0 } ?? false
            row.choiceID = choiceID
            row.via = via
            row.resolvedAt = input.occurredAt
            let approved = choice.answer == .approval ? question.topic.handles : []
            plan = .answer(id, row, approved: approved, until: choice.grantSeconds.map { input.occurredAt.adding(seconds: $0) })
        case .handlesObserved(let checked, let known):
            plan = .observed(checked: checked, known: known)
        case .permissionChanged(let permission, let state, let cause):
            plan = .permission(PermissionRow(permission: permission, state: state, since: input.occurredAt, cause: cause))
        case .subjectErased(let erasure):
            guard try store.isKnownSubject(input.subject) else {
                throw reject("the subject has no event before this one: there is nothing to erase")
            }
            plan = .erasure(erasure)
        }

        if let given = input.seq, given != seq {
            throw reject("seq \(given) does not match the position the event would get, \(seq)")
        }
        let record: [UInt8]
        let hash: ChainHash
        if let storedRecord {
            record = storedRecord
            hash = try storedHash ?? storedRecord.withUnsafeBytes { stored in
                chainHash(previous: head.hash, record: try SealedRecord.chainedPart(of: stored))
            }
        } else {
            let made = try store.record(input, recordedAt: recordedAt, seq: seq)
            record = made.stored
            hash = chainHash(previous: head.hash, record: made.chained)
        }
        if let given = input.hash, given != hash {
            throw reject("hash \(given) does not match the chain hash the event would get, \(hash)")
        }

        input.recordedAt = recordedAt
        input.seq = seq
        input.hash = hash
        let event = input
        let newSubject = try !store.isKnownSubject(event.subject)
        try store.storeEvent(event, seq: seq, record: record, hash: hash, newSubject: newSubject)
        switch plan {
        case .none:
            break
        case .question(let id, let row):
            try store.updateQuestion(id, row: row, seq: seq)
        case .answer(let id, let row, let approved, let until):
            try store.updateQuestion(id, row: row, seq: seq)
            for handle in approved {
                try approve(handle, subject: row.subject, since: event.occurredAt, until: until, question: id, seq: seq)
            }
        case .observed(let checked, let known):
            let known = Set(known)
            for handle in checked {
                let row = HandleRow(handle: handle, known: known.contains(handle), since: event.occurredAt, until: nil, source: .observation(seq))
                try store.putHandle(subject: event.subject, row, seq: seq)
            }
        case .permission(let row):
            try store.putPermission(subject: event.subject, row, seq: seq)
        case .erasure(let erasure):
            try store.erase(subject: event.subject, erasure, seq: seq, recordedAt: recordedAt)
        }
        try store.endEvent(seq: seq)
        head = LogHead(seq: seq, hash: hash, recordedAt: recordedAt)
        return .appended(seq: seq)
    }

    /// The rules of the JSON form that a value made in Swift could break, and the same normalization
    /// (duplicate handles in an observation folded), so that what is stored always exports and re-imports.
    /// `appending` is `false` when the event is replayed from the log: the text rules of docs/spec/EVENTS.md "Text"
    /// apply to events appended from now on, and stored events are read as they were accepted.
    static func checkShape(_ event: inout PermissionEvent, appending: Bool, reject: (String) -> EventRejection) throws {
        // Field by field, not over an array of them: this runs for every event appended or replayed.
        do {
            if appending, event.erasedFields == nil {
                try event.checkText()
            } else if appending {
                // An erased event's personal fields are gone: what is left is checked as appended text is.
                try validateIdentifier(event.id, field: "id", maxBytes: 128)
                try validateIdentifier(event.subject, field: "subject", maxBytes: 256)
            } else {
                try validateText(event.id, field: "id", maxBytes: 128)
                try validateText(event.subject, field: "subject", maxBytes: 256)
            }
        } catch {
            throw reject(error.description)
        }
        if let salt = event.salt, salt.count != SealedFields.saltSize || PersonalFields(of: event).isEmpty {
            throw reject("salt: \(salt.count != SealedFields.saltSize ? "must be 32 bytes" : "the event has no personal field to commit to")")
        }
        func checkYear(_ time: Timestamp?, _ name: String) throws {
            if let time, time < .earliest || time > .latest {
                throw reject("\(name): falls outside the years 0000 to 9999")
            }
        }
        try checkYear(event.occurredAt, "occurredAt")
        try checkYear(event.recordedAt, "recordedAt")
        switch event.payload {
        case .questionAsked(let question):
            if let expiresAt = question.expiresAt, expiresAt <= event.occurredAt || expiresAt > .latest {
                throw reject("question.expiresAt: \(expiresAt) is not later than occurredAt \(event.occurredAt)")
            }
        case .questionAnswered(_, let choiceID, _) where choiceID.isEmpty:
            throw reject("choiceId: must not be empty")
        case .handlesObserved(let checked, let known):
            do {
                event.payload = try .handlesObserved(checking: checked, known: known)
            } catch {
                throw reject(error.description)
            }
        default:
            break
        }
    }

    private func knownQuestion(_ id: UUID, event: PermissionEvent, reject: (String) -> EventRejection) throws -> QuestionDefinition {
        guard let definition = try store.question(id) else {
            throw reject("question \(id.uuidString) is not in the ledger (no question.asked for it)")
        }
        guard compareUTF8(definition.row.subject, event.subject) == 0 else {
            throw reject("subject \(quoted(event.subject)) differs from question \(id.uuidString)'s subject \(quoted(definition.row.subject))")
        }
        return definition
    }

    /// When `event` answers an answered question of its subject with the choice it was answered with (the same
    /// response delivered again, which the rules fold into the first): the seq of the answer it repeats.
    private func repeatedAnswer(_ event: PermissionEvent) throws -> UInt64? {
        guard case .questionAnswered(let id, let choiceID, _) = event.payload, let definition = try store.question(id),
              [.approved, .denied].contains(definition.row.state), definition.row.choiceID == choiceID,
              compareUTF8(definition.row.subject, event.subject) == 0 else { return nil }
        return try store.seq(ofLatestQuestionVersion: id) ?? definition.row.askedSeq
    }

    private func pendingQuestion(_ id: UUID, event: PermissionEvent, reject: (String) -> EventRejection) throws -> QuestionDefinition {
        let definition = try knownQuestion(id, event: event, reject: reject)
        guard definition.row.state == .pending else {
            throw reject("question \(id.uuidString) is no longer pending (it is \(definition.row.state.rawValue)); \(event.type.rawValue) is accepted only while pending")
        }
        return definition
    }

    /// Applies an approval to one handle: it replaces what came before, except that a time-limited
    /// approval never shortens a current one that lasts longer.
    private func approve(_ handle: CommunicationHandle, subject: String, since: Timestamp, until: Timestamp?, question: UUID, seq: UInt64) throws {
        if let until, let current = try store.handle(subject: subject, handle) {
            if current.known, current.until.map({ $0 > until }) ?? true { return }
        }
        let row = HandleRow(handle: handle, known: true, since: since, until: until, source: .question(question))
        try store.putHandle(subject: subject, row, seq: seq)
    }
}
