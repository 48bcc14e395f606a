internal import LMDB
import PermissionModel

/// The events an append gave in their erased form (an import of an export's erased events), each waiting for the
/// erasure that erased it, which must come later in the same append: an erasure covers only events before it.
///
/// An erased event whose erasure the append does not hold (an export cut short before it) would be stored with its
/// personal fields gone and nothing to say why, which every reader and `verify` take for damage. So once the
/// append's events are applied, and before anything is committed, ``rejections(_:_:limit:)`` finds, for each
/// erased event, the erasure that covers it in the ledger as it then stands, and rejects the event when none does
/// or when it is not the one the event names (its ``ErasureMark``).
///
/// Memory stays bounded by the number of erasures named, not of erased events: the events are kept in groups of
/// one subject and one named erasure (its seq and basis), each group as its first and last event (seq and
/// `recordedAt`) and the indices and types of its first events, which are all a rejection reports. That is enough
/// because `recordedAt` never decreases along the log: an erasure that covers a group's last event covers every
/// event before it of the subject up to its cut, and an earlier erasure that covered any of the group would cover
/// its first.
struct AwaitedErasures {
    private struct Group {
        var first: (seq: UInt64, recordedAt: Timestamp)
        var last: (seq: UInt64, recordedAt: Timestamp)
        /// The first events' indices in the append, with their types.
        var events: [(index: Int, type: String)]
    }

    /// A subject and the erasure its events name. The subject by its bytes, as the ledger tells subjects apart:
    /// Swift's `String` equality would take two spellings of one accented letter for one subject.
    private struct Named: Hashable {
        var subject: [UInt8]
        /// The erasure the events name; `nil` for events made in Swift that name none (any erasure covering them).
        var erasure: ErasureMark?
    }

    /// How many indices each group keeps: as many as an append reports rejections.
    let indexLimit: Int
    private var groups: [Named: Group] = [:]
    /// The groups in the order their first events came.
    private var order: [Named] = []

    init(indexLimit: Int) {
        self.indexLimit = max(1, indexLimit)
    }

    var isEmpty: Bool { groups.isEmpty }

    /// Notes the event at `index` of the append, of `type`, given erased as `mark` names, appended at `seq`.
    mutating func note(index: Int, type: String, subject: String, mark: ErasureMark?, seq: UInt64, recordedAt: Timestamp) {
        let named = Named(subject: Array(subject.utf8), erasure: mark)
        guard var group = groups[named] else {
            groups[named] = Group(first: (seq, recordedAt), last: (seq, recordedAt), events: [(index, type)])
            order.append(named)
            return
        }
        group.last = (seq, recordedAt)
        if group.events.count < indexLimit { group.events.append((index, type)) }
        groups[named] = group
    }

    /// The rejections of the events that no erasure in `txn` covers as they name, in the order of the append,
    /// at most `limit`.
    func rejections(_ txn: ReadTransaction, _ tables: Tables, limit: Int) throws -> [(index: Int, rejection: EventRejection)] {
        var found: [(index: Int, rejection: EventRejection)] = []
        for named in order {
            let group = groups[named]!
            guard let reason = try problem(named, group, txn, tables) else { continue }
            found += group.events.map { ($0.index, EventRejection(reason, eventType: $0.type)) }
        }
        found.sort { $0.index < $1.index }
        return Array(found.prefix(limit))
    }

    private func problem(_ named: Named, _ group: Group, _ txn: ReadTransaction, _ tables: Tables) throws -> String? {
        let expected = named.erasure
        let subject = String(decoding: named.subject, as: UTF8.self)
        let first = try KeyRing.erasure(txn, tables, subject: subject, seq: group.first.seq, recordedAt: group.first.recordedAt)
        let last = try KeyRing.erasure(txn, tables, subject: subject, seq: group.last.seq, recordedAt: group.last.recordedAt)
        let given = expected.map { " (by seq \($0.seq), \($0.basis.rawValue))" } ?? ""
        guard let first, let last else {
            return "erased: the event is given erased\(given), but no erasure of its subject after it erases it, in the ledger or later in this append: an erased event is appended only with its erasure"
        }
        guard let expected else { return nil }
        for covering in [first, last] where covering != expected {
            return "erased: the event is given as erased by seq \(expected.seq) (\(expected.basis.rawValue)), but the erasure that erases it is seq \(covering.seq) (\(covering.basis.rawValue))"
        }
        return nil
    }
}
