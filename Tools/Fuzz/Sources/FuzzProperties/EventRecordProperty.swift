@_spi(StorageEngine) import PermissionLedger
import PermissionModel

/// What must hold of any bytes given to ``EventRecord/decode(_:)``, the decoder of every event read back
/// from LMDB (a damaged or hostile data file included):
///
/// - it returns or throws a ``EventRecord/DecodingError``, and never traps or reads out of bounds;
/// - an event it returns has a `recordedAt`, and its canonical encoding decodes again to an equal event
///   whose encoding is the same bytes: `encode(decode(encode(x))) == encode(x)`. (The input itself need
///   not be canonical: an over-long varint, say, decodes to the same number.)
/// - the event can be exported as JSON without trapping, however odd its values (`export` of a damaged
///   ledger prints what it reads).
public enum EventRecordProperty {
    public static func check(_ bytes: UnsafeRawBufferPointer) {
        let event: PermissionEvent
        do {
            event = try EventRecord.decode(bytes)
        } catch {
            _ = error.description
            return
        }
        guard let recordedAt = event.recordedAt else {
            propertyBroken("a decoded record has no recordedAt", [("record", shown(bytes))])
        }
        let canonical = EventRecord.encode(event, recordedAt: recordedAt)
        let again: PermissionEvent
        do {
            again = try canonical.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
        } catch {
            propertyBroken(
                "the canonical encoding of a decoded record does not decode",
                [("record", shown(bytes)), ("canonical", shown(canonical)), ("error", "\(error)")])
        }
        guard again == event else {
            propertyBroken(
                "the canonical encoding of a decoded record decodes to another event",
                [("record", shown(bytes)), ("canonical", shown(canonical)), ("first", "\(event)"), ("again", "\(again)")])
        }
        let canonicalAgain = EventRecord.encode(again, recordedAt: again.recordedAt ?? recordedAt)
        guard canonicalAgain == canonical else {
            propertyBroken(
                "the canonical encoding is not stable",
                [("record", shown(bytes)), ("canonical", shown(canonical)), ("again", shown(canonicalAgain))])
        }
        _ = EventJSON.encode(event)
    }
}
