import Dispatch
import Foundation

/// What of each event a write transaction stores needs nothing of the transaction, made on a second thread while
/// the writing thread goes on with the rules and projections of the next events: the event's Merkle leaf (its leaf
/// data, docs/STORAGE.md "Leaf data", and the leaf's SHA-256) and, for an appended event, its `events` entry, whose
/// personal fields are sealed there (ChaCha20-Poly1305, with the key, nonce and associated data the writing thread
/// gave). Moving the seal here took a quarter of the writing thread's samples off it (`perf`, docs/PERFORMANCE.md).
///
/// The writing thread hands each event's work over as a closure, in seq order, in chunks of ``chunk``; ``take()``
/// waits for the chunks handed over, does the rest itself (a small transaction does not wait on a thread hop), and
/// returns what was made in seq order, for the writing thread to write before the transaction commits, or before
/// it reads an entry it has not written yet. A store dropped with its transaction drops what is pending.
final class EventFinishing: @unchecked Sendable {
    /// What one event's work makes: its leaf data (`nil` for an event that has no leaf: a record of format 1),
    /// and its `events` entry (`nil` when the transaction does not write the log: a rebuild).
    struct Made {
        var leaf: [UInt8]?
        var entry: [UInt8]?
    }

    /// An event's work, done on the second thread.
    typealias Work = @Sendable () throws -> Made

    /// What ``take()`` returns of an event: its leaf's hash and its `events` entry, each when it has one.
    struct Finished {
        var seq: UInt64
        var leaf: TreeHash?
        var entry: [UInt8]?
    }

    /// The events handed to the second thread at a time.
    static let chunk = 64

    private let queue = DispatchQueue(label: "PermissionLedger.event-finishing")
    private let group = DispatchGroup()
    /// Work not yet handed over. The writing thread's alone.
    private var waiting: [(seq: UInt64, work: Work)] = []
    /// What the second thread made, and the first error it met: its alone until ``take()`` has waited for it.
    private var finished: [Finished] = []
    private var failure: (any Error)?
    /// Events added since the last ``take()``.
    private(set) var count = 0
    /// The seq of the first event added since the last ``take()``.
    private(set) var firstSeq: UInt64?

    /// Adds the work of the event at `seq`, the next one in seq order.
    func add(seq: UInt64, _ work: @escaping Work) {
        waiting.append((seq, work))
        if firstSeq == nil { firstSeq = seq }
        count += 1
        guard waiting.count >= Self.chunk else { return }
        let handed = waiting
        waiting.removeAll(keepingCapacity: true)
        queue.async(group: group) {
            guard self.failure == nil else { return }
            do {
                try self.finish(handed)
            } catch {
                self.failure = error
            }
        }
    }

    /// Does `work` in order, onto ``finished``; stops at the first that throws.
    private func finish(_ work: [(seq: UInt64, work: Work)]) throws {
        for (seq, work) in work {
            let made = try work()
            guard made.leaf != nil || made.entry != nil else { continue }
            finished.append(Finished(seq: seq, leaf: made.leaf.map { .leaf($0) }, entry: made.entry))
        }
    }

    /// What was made of every event added since the last call, in seq order.
    ///
    /// - Throws: The first error an event's work threw (a record that does not decode).
    func take() throws -> [Finished] {
        // The wait orders the second thread's writes before the reads below.
        group.wait()
        defer {
            waiting.removeAll(keepingCapacity: true)
            finished.removeAll(keepingCapacity: true)
            failure = nil
            count = 0
            firstSeq = nil
        }
        if let failure { throw failure }
        try finish(waiting)
        return finished
    }
}
