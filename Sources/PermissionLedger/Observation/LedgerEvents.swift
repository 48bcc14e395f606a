import Foundation
internal import LMDB
import PermissionModel

/// The events of a ledger from a point on, live: see ``Ledger/events(after:subject:pollInterval:)``.
public struct LedgerEvents: AsyncSequence, Sendable {
    /// Each event comes with its `seq`, `recordedAt` and `hash`.
    public typealias Element = PermissionEvent
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
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        /// How far the log has been read: no event up to this `seq` is left to return.
        var position: UInt64
        let subject: String?
        let pollInterval: Duration
        var page: [PermissionEvent] = []
        var index = 0
        /// How far the current page covers the log.
        var through: UInt64 = 0

        /// The next event, waiting for one to be appended if need be; `nil` once the task is cancelled or the
        /// ledger closed.
        public mutating func next() async throws -> PermissionEvent? {
            while !Task.isCancelled {
                if index == page.count, ledger.watch.isClosed { return nil }
                if index < page.count {
                    let event = page[index]
                    index += 1
                    if index == page.count { position = through } else { position = event.seq! }
                    return event
                }
                (page, through) = try ledger.page(after: position, subject: subject, limit: LedgerEvents.pageSize)
                index = 0
                if page.isEmpty {
                    position = through
                    await ledger.watch.wait(after: position, timeout: pollInterval)
                }
            }
            return nil
        }
    }
}
