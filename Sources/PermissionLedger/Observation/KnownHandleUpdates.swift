import Foundation
internal import LMDB
import PermissionModel

/// A subject's known handles after each change: see ``Ledger/knownHandleUpdates(subject:pollInterval:)``.
public struct KnownHandleUpdates: AsyncSequence, Sendable {
    /// The known handles as of one event.
    public struct Update: Hashable, Sendable {
        /// The event after which the set holds (the head when iteration started, for the first update).
        public var seq: UInt64
        /// The handles the subject may talk to, ordered by kind, then value.
        public var handles: [KnownHandle]
    }

    /// The set of known handles after one event.
    public typealias Element = Update
    /// Reading the log can throw ``LedgerError``.
    public typealias Failure = any Error

    let ledger: Ledger
    let subject: String
    let pollInterval: Duration

    /// An iterator whose first element is the set at the head when it is first advanced.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ledger: ledger, subject: subject, pollInterval: pollInterval)
    }

    /// Reads the subject's events and reports the set when it differs from the last one reported.
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        let subject: String
        let pollInterval: Duration
        var events: LedgerEvents.Iterator?
        /// The last set given, each handle as stored (``LedgerView/knownHandles(subject:identities:)``) and
        /// whether it was erased: erased handles, whose values are gone, are told apart by their tokens, and a
        /// handle that becomes erased, or readable again, is a change.
        var last: [[UInt8]]?

        private static func compared(_ known: (handles: [KnownHandle], identities: [[UInt8]])) -> [[UInt8]] {
            zip(known.handles, known.identities).map { $1 + [$0.erased == nil ? 0 : 1] }
        }

        /// How far the log has been read (see ``LedgerEvents/Iterator/position``); 0 before the first `next()`.
        public var position: UInt64 { events?.position ?? 0 }

        /// The next set of known handles that differs from the last, or `nil` once the task is cancelled.
        public mutating func next() async throws -> Update? {
            guard var events else {
                let subject = subject
                let (first, identities) = try ledger.read(retries: Ledger.readRetries) { view in
                    let known = try view.knownHandles(subject: subject, identities: true)
                    return (Update(seq: view.head.seq, handles: known.handles), Self.compared(known))
                }
                events = ledger.events(after: first.seq, subject: subject, pollInterval: pollInterval).makeAsyncIterator()
                last = identities
                return first
            }
            defer { self.events = events }
            while let event = try await events.next() {
                switch event.type {
                // An erasure changes no membership, but may make values erased: a change the set shows.
                case .questionAnswered, .handlesObserved, .subjectErased: break
                default: continue
                }
                let subject = subject
                let known = try ledger.read(asOf: .seq(event.seq), retries: Ledger.readRetries) { try $0.knownHandles(subject: subject, identities: true) }
                let compared = Self.compared(known)
                guard compared != last else { continue }
                last = compared
                return Update(seq: event.seq, handles: known.handles)
            }
            return nil
        }
    }
}
