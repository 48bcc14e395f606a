import Foundation
internal import LMDB
import PermissionModel

/// A stored `events` value split into the chain hash in front and the event record after it.
private func storedParts(_ value: UnsafeRawBufferPointer) throws -> (hash: ChainHash, record: UnsafeRawBufferPointer) {
    guard value.count > 32 else { throw EventRecord.DecodingError(reason: "stored value of \(value.count) bytes is too short") }
    return (ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: value[0..<32]))), UnsafeRawBufferPointer(rebasing: value[32...]))
}

/// The header of a stored event (see `EventRecord.decodeHeader`), with the chain hash stored before its record.
func decodeStoredHeader(_ value: UnsafeRawBufferPointer, id: Bool = true) throws -> (header: EventRecord.Header, hash: ChainHash) {
    let stored = try storedParts(value)
    return (try EventRecord.decodeHeader(stored.record, id: id), stored.hash)
}

func decodeStoredEvent(_ value: UnsafeRawBufferPointer, seq: UInt64) throws -> PermissionEvent {
    let stored = try storedParts(value)
    var event = try EventRecord.decode(stored.record)
    event.seq = seq
    event.hash = stored.hash
    return event
}
