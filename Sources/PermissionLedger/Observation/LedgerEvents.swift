import Foundation
internal import LMDB
import PermissionModel

/// The events of a ledger from a point on, live: see ``Ledger/events(after:subject:pollInterval:)``.
public struct LedgerEvents: AsyncSequence, Sendable {
    /// Each event with its `seq`, `recordedAt` and `hash`.
    public typealias Element = RecordedEvent
    /// Reading the log can throw ``LedgerError``.
    public typealias Failure = any Error

    let ledger: Ledger
    let after: UInt64
    let subject: String?
    let pollInterval: Duration
    /// How many events one read transaction fetches.
    static let pageSize = 256

    /// An iterator starting after the sequence's `seq`; each iterator reads the log on its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ledger: ledger, position: after, subject: subject, pollInterval: pollInterval)
    }

    /// Reads the log a page at a time and waits for new commits once it has read everything.
    ///
    /// Iterate by hand to ask how far it has got:
    ///
    /// ```swift
    /// var events = ledger.events(after: saved).makeAsyncIterator()
    /// while let event = try await events.next() {
    ///     handle(event)
    ///     save(events.position)   // resume later with ledger.events(after: saved)
    /// }
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        /// How far the log has been read: no event up to this `seq` is left to return. Events of other
        /// subjects (for a subject's subscription) count as read, so this may be past the last event returned;
        /// a new subscription `after:` it goes on exactly where this one stopped.
        public private(set) var position: UInt64
        let subject: String?
        let pollInterval: Duration
        var page: [RecordedEvent] = []
        var index = 0
        /// How far the current page covers the log.
        var through: UInt64 = 0

        /// The next event, waiting for one to be appended if need be; `nil` once the task is cancelled or the
        /// ledger closed.
        public mutating func next() async throws -> RecordedEvent? {
            while !Task.isCancelled {
                if index == page.count, ledger.watch.isClosed { return nil }
                if index < page.count {
                    let event = page[index]
                    index += 1
                    if index == page.count { position = through } else { position = event.seq }
                    return event
                }
                let head: UInt64
                (page, through, head) = try ledger.page(after: position, subject: subject, limit: LedgerEvents.pageSize)
                index = 0
                ledger.metrics.subscriptionLag.record(head - Swift.min(head, position))
                if page.isEmpty {
                    position = through
                    await ledger.watch.wait(after: position, timeout: pollInterval)
                }
            }
            return nil
        }
    }
}
