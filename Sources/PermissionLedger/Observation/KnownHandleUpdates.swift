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
        var last: [CommunicationHandle]?

        /// How far the log has been read (see ``LedgerEvents/Iterator/position``); 0 before the first `next()`.
        public var position: UInt64 { events?.position ?? 0 }

        /// The next set of known handles that differs from the last, or `nil` once the task is cancelled.
        public mutating func next() async throws -> Update? {
            guard var events else {
                let subject = subject
                let first = try ledger.read { view in
                    Update(seq: view.head.seq, handles: try view.knownHandles(subject: subject))
                }
                events = ledger.events(after: first.seq, subject: subject, pollInterval: pollInterval).makeAsyncIterator()
                last = first.handles.map(\.handle)
                return first
            }
            defer { self.events = events }
            while let event = try await events.next() {
                switch event.type {
                case .questionAnswered, .handlesObserved: break
                default: continue
                }
                let subject = subject
                let handles = try ledger.read(asOf: .seq(event.seq)) { try $0.knownHandles(subject: subject) }
                guard handles.map(\.handle) != last else { continue }
                last = handles.map(\.handle)
                return Update(seq: event.seq, handles: handles)
            }
            return nil
        }
    }
}
