internal import Crypto
import Foundation
import PermissionModel

extension Ledger {
    /// What ``retain(before:dryRun:)`` erased, or would erase.
    public struct RetentionSummary: Hashable, Sendable {
        /// The retention limit: personal fields recorded before it are erased.
        public var before: Timestamp
        /// Whether nothing was written (a dry run).
        public var dryRun: Bool
        /// One erasure per subject that had readable personal fields recorded before ``before``, in the order of
        /// the subjects' names. In a dry run, ``Ledger/ErasureSummary/seq`` is 0.
        public var erasures: [ErasureSummary]
        /// How many events the erasures made unreadable.
        public var events: Int { erasures.reduce(0) { $0 + $1.events } }
        /// How many personal values they made unreadable.
        public var fields: Int { erasures.reduce(0) { $0 + $1.fields } }
    }

    /// Applies a retention policy (docs/spec/PRIVACY.md, `retain`): erases, with the basis `retention`, every
    /// personal field recorded before `before`, one `subject.erased` event with that cut per subject that has such
    /// fields still readable.
    ///
    /// Meant to run from a timer, in any number of processes at once: each subject's erasure has an id made of the
    /// subject, the cut and the latest event it erases, and a subject with nothing left to erase is passed over, so
    /// a second run, here or in another process, erases nothing more; a run with the same cut after events were
    /// recorded before it erases those.
    ///
    /// Cancelling its task stops it between two subjects, with `CancellationError`: the erasures already recorded
    /// stay (each is a transaction of its own), and the next run carries on from there.
    ///
    /// - Parameters:
    ///   - before: the cut: every personal field recorded before it is erased.
    ///   - dryRun: count what would be erased, and write nothing.
    public func retain(before: Timestamp, dryRun: Bool = false) async throws -> RetentionSummary {
        try await offPool("ledger-retain") { [self] cancellation in
            try retainSynchronously(before: before, dryRun: dryRun, cancellation: cancellation)
        }
    }

    /// ``retain(before:dryRun:)`` on the calling thread, for the tool.
    package func retainSynchronously(before: Timestamp, dryRun: Bool = false) throws -> RetentionSummary {
        try retainSynchronously(before: before, dryRun: dryRun, cancellation: nil)
    }

    private func retainSynchronously(before: Timestamp, dryRun: Bool, cancellation: Cancellation?) throws -> RetentionSummary {
        var summary = RetentionSummary(before: before, dryRun: dryRun, erasures: [])
        for subject in try read({ try $0.subjects() }) {
            try cancellation?.check()
            let readable = try readableFields(subject: subject, before: before)
            guard !readable.isEmpty else { continue }
            if dryRun {
                summary.erasures.append(ErasureSummary(
                    subject: subject, seq: 0, wasRecorded: false, events: readable.count, fields: readable.values.reduce(0, +)))
                continue
            }
            let erasure = Erasure(basis: .retention, before: before)
            do {
                let id = Self.retentionID(subject: subject, before: before, latest: readable.keys.max()!)
                let erased = try eraseSynchronously(subject: subject, erasure, occurredAt: options.clock(), id: id)
                if !erased.wasRecorded { summary.erasures.append(erased) }
            } catch let rejected as AppendRejected {
                // Another process erased the same first (its event has the same id and another time): nothing is
                // left to erase. Anything else is a failure.
                guard try readableFields(subject: subject, before: before).isEmpty else { throw rejected }
            }
        }
        return summary
    }

    /// The id of the retention erasure of `subject`'s fields before `before`, whose latest readable event is at
    /// `latest`: the same in every process that finds the same fields to erase.
    static func retentionID(subject: String, before: Timestamp, latest: UInt64) -> String {
        var input = Array(subject.utf8)
        input.append(0)
        input += Array(before.description.utf8)
        input.append(0)
        input += Array(String(latest).utf8)
        return "retention-" + hexString(SHA256.hash(data: input).prefix(16))
    }
}
