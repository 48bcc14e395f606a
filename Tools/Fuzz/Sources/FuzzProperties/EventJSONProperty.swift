@_spi(StorageEngine) import PermissionLedger
import PermissionModel

/// What must hold of any line given to ``EventJSON/decode(line:)-(some Collection<UInt8>)``, the parser
/// `permission-ledger import` runs on every line:
///
/// - it returns or throws an ``EventRejection``, and never traps (nor does describing the rejection);
/// - an event it returns survives its export form: `encode` gives a line that parses again to an equal
///   event, whose own export form is the same bytes (the canonical form is stable);
/// - the event survives its stored form: ``EventRecord/encode(_:recordedAt:)`` decodes again to the same
///   event, with `recordedAt` set and without `seq` and `hash` (which the ledger keeps elsewhere).
public enum EventJSONProperty {
    public static func check(_ line: UnsafeBufferPointer<UInt8>) {
        let event: PermissionEvent
        do {
            guard let parsed = try EventJSON.decode(line: line) else { return }
            event = parsed
        } catch {
            _ = error.description
            return
        }

        let exported = EventJSON.encode(event)
        let again: PermissionEvent
        do {
            guard let parsed = try EventJSON.decode(line: exported) else {
                propertyBroken("the export form of an accepted line is blank", [("line", shown(line)), ("export", exported)])
            }
            again = parsed
        } catch {
            propertyBroken(
                "the export form of an accepted line is rejected",
                [("line", shown(line)), ("export", exported), ("rejection", error.description)])
        }
        guard again == event else {
            propertyBroken(
                "the export form of an accepted line parses to another event",
                [("line", shown(line)), ("export", exported), ("first", "\(event)"), ("again", "\(again)")])
        }
        let exportedAgain = EventJSON.encode(again)
        guard exportedAgain.utf8.elementsEqual(exported.utf8) else {
            propertyBroken(
                "the export form is not stable", [("line", shown(line)), ("export", exported), ("again", exportedAgain)])
        }

        let recordedAt = event.recordedAt ?? event.occurredAt
        let record = EventRecord.encode(event, recordedAt: recordedAt)
        let stored: PermissionEvent
        do {
            stored = try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
        } catch {
            propertyBroken(
                "the stored form of an accepted line does not decode",
                [("line", shown(line)), ("record", shown(record)), ("error", "\(error)")])
        }
        var expected = event
        expected.recordedAt = recordedAt
        expected.seq = nil
        expected.hash = nil
        guard stored == expected, EventJSON.encode(stored).utf8.elementsEqual(EventJSON.encode(expected).utf8) else {
            propertyBroken(
                "the stored form of an accepted line decodes to another event",
                [("line", shown(line)), ("expected", EventJSON.encode(expected)), ("stored", EventJSON.encode(stored))])
        }
    }
}
