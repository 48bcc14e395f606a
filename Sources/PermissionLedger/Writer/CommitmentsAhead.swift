import Dispatch
import Foundation
import PermissionModel

/// The salts and commitments of a batch's events, made on a second thread ahead of the writing thread, which
/// applies the rules to the events before them meanwhile.
///
/// A commitment (HMAC-SHA256 keyed by a new salt, ``SealedFields``) depends on nothing but the event's personal
/// fields and the salt, and with the system's secrets a salt depends on nothing at all: both can be made before the
/// rules reach the event. Keying swift-crypto's HMAC with a new key for each event costs about as much as the rest of
/// sealing an event on the writing thread (`perf`, docs/PERFORMANCE.md). The writing thread takes an event's salt and
/// commitment (``made(at:)``) only when the fields it seals are the very bytes they were made for
/// (``SealedRecord/prepare(_:seq:recordedAt:eventKey:tokens:secrets:ahead:)``): otherwise, and for events this
/// leaves out, it makes them itself, as it always did.
///
/// Left out: events given with their salt (an import's) or in their erased form, and every event of a ledger whose
/// secrets are seeded (tests only: a seeded salt is derived from the event's seq, which only the rules know).
final class CommitmentsAhead: @unchecked Sendable {
    /// What an event's salt and commitment were made for: its personal fields' canonical bytes.
    struct Made {
        var fields: [UInt8]
        var salt: [UInt8]
        var commitment: [UInt8]
    }

    /// The events of each piece of work handed to the second thread.
    static let chunk = 32
    /// The most events of one batch made ahead, so that what is held stays small however large the batch.
    static let limit = 16_384
    /// The fewest events of a batch worth a thread hop: smaller batches (a group commit's single appends) make their
    /// own, as before.
    static let fewest = 128

    private let events: [PermissionEvent]
    private let secrets: SecretSource
    /// One place per event made ahead, written by the second thread, read by the writing thread once the chunk's
    /// group has been waited for: unsafe memory, so that the two threads never touch one Swift array at once.
    private let made: UnsafeMutableBufferPointer<Made?>
    private let groups: [DispatchGroup]
    private let lock = NSLock()
    private var cancelled = false

    /// Starts making the salts and commitments of `events` on a second thread; `nil` when there is nothing to gain.
    /// The events of the first chunk are left to the writing thread, which reaches them before the second thread
    /// could.
    init?(_ events: [PermissionEvent], secrets: SecretSource) {
        guard events.count >= Self.fewest, !secrets.isSeeded else { return nil }
        self.events = events
        self.secrets = secrets
        let count = min(events.count, Self.limit)
        made = .allocate(capacity: count)
        made.initialize(repeating: nil)
        groups = (0..<((count + Self.chunk - 1) / Self.chunk)).map { _ in DispatchGroup() }
        let queue = DispatchQueue(label: "PermissionLedger.commitments-ahead")
        for chunk in 1..<groups.count {
            queue.async(group: groups[chunk]) { [self] in
                guard !lock.withLock({ cancelled }) else { return }
                for index in (chunk * Self.chunk)..<min((chunk + 1) * Self.chunk, made.count) {
                    made[index] = Self.make(events[index], secrets: secrets)
                }
            }
        }
    }

    deinit {
        made.deinitialize()
        made.deallocate()
    }

    /// Stops the work not yet started: the writing thread will take no more of it.
    func cancel() { lock.withLock { cancelled = true } }

    /// The salt and commitment made for the event at `index` of the batch, once made; `nil` for an event left out.
    func made(at index: Int) -> Made? {
        guard index >= Self.chunk, index < made.count else { return nil }
        groups[index / Self.chunk].wait()
        return made[index]
    }

    /// The salt and commitment of `event`'s personal fields, as the rules will see them: an observation's handles
    /// folded as ``Projector/checkShape(_:appending:reject:)`` folds them.
    private static func make(_ event: PermissionEvent, secrets: SecretSource) -> Made? {
        guard event.salt == nil, event.erasedFields == nil else { return nil }
        var shaped = event
        if case .handlesObserved(let checked, let known) = event.payload {
            guard let folded = try? PermissionEvent.Payload.handlesObserved(checking: checked, known: known) else { return nil }
            shaped.payload = folded
        }
        let fields = PersonalFields(of: shaped)
        guard !fields.isEmpty else { return nil }
        let encoded = fields.encoded()
        let salt = secrets.bytes(SealedFields.saltSize, for: "")
        return Made(fields: encoded, salt: salt, commitment: SealedFields.commitment(toEncoded: encoded, salt: salt))
    }
}
