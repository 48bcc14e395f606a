import Dispatch
import Foundation

/// The leaves of the events a write transaction stores, made and hashed on a second thread while the writing thread
/// goes on with the rules and projections of the next events.
///
/// A leaf's data (the event's JSON, docs/STORAGE.md "Leaf data") and its SHA-256 need nothing of the transaction,
/// and are about a sixth of an append's processor time. The writing thread hands each leaf over as a closure, in
/// seq order, in chunks of ``chunk``; ``take()`` waits for the chunks handed over, makes the rest itself (a small
/// transaction does not wait on a thread hop), and returns every hash in seq order, for the writing thread to add to
/// the tree and write before the transaction commits. A store dropped with its transaction drops what is pending.
final class EventFinishing: @unchecked Sendable {
    /// What makes one event's leaf data: `nil` for an event that has no leaf (a record of format 1).
    typealias Leaf = @Sendable () throws -> [UInt8]?

    /// The leaves handed to the hashing thread at a time.
    static let chunk = 64

    private let queue = DispatchQueue(label: "PermissionLedger.event-finishing")
    private let group = DispatchGroup()
    /// Leaves not yet handed over. The writing thread's alone.
    private var waiting: [(seq: UInt64, leaf: Leaf)] = []
    /// Hashes made by the hashing thread, and the first error it met: its alone until ``take()`` has waited for it.
    private var hashed: [(seq: UInt64, hash: TreeHash)] = []
    private var failure: (any Error)?
    /// Leaves added since the last ``take()``.
    private(set) var count = 0

    /// Adds the leaf of the event at `seq`, the next one in seq order.
    func add(seq: UInt64, _ leaf: @escaping Leaf) {
        waiting.append((seq, leaf))
        count += 1
        guard waiting.count >= Self.chunk else { return }
        let work = waiting
        waiting.removeAll(keepingCapacity: true)
        queue.async(group: group) {
            guard self.failure == nil else { return }
            do {
                try self.hash(work)
            } catch {
                self.failure = error
            }
        }
    }

    /// Makes and hashes `leaves` in order, onto ``hashed``; stops at the first that throws.
    private func hash(_ leaves: [(seq: UInt64, leaf: Leaf)]) throws {
        for (seq, leaf) in leaves {
            if let data = try leaf() { hashed.append((seq, .leaf(data))) }
        }
    }

    /// The hash of every leaf added since the last call, in seq order.
    ///
    /// - Throws: The first error a leaf threw (a record that does not decode).
    func take() throws -> [(seq: UInt64, hash: TreeHash)] {
        // The wait orders the hashing thread's writes before the reads below.
        group.wait()
        defer {
            waiting.removeAll(keepingCapacity: true)
            hashed.removeAll(keepingCapacity: true)
            failure = nil
            count = 0
        }
        if let failure { throw failure }
        try hash(waiting)
        return hashed
    }
}
