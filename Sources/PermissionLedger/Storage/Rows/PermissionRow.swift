internal import Crypto
import Foundation
import PermissionModel

/// A version of one system permission's state for one subject.
@_spi(StorageEngine) public struct PermissionRow: Hashable {
    public var permission: SystemPermission
    public var state: SystemPermission.State
    public var since: Timestamp
    public var cause: SystemPermission.Cause?

    public func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 16)
        w.byte(1)
        w.byte(Codes.permission(permission))
        w.byte(Codes.state(state))
        w.signed(since.microseconds)
        w.byte(cause.map(Codes.cause) ?? 0)
        return w.bytes
    }

    public init(permission: SystemPermission, state: SystemPermission.State, since: Timestamp, cause: SystemPermission.Cause?) {
        self.permission = permission
        self.state = state
        self.since = since
        self.cause = cause
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown permission row version") }
        permission = try Codes.permission(try r.byte())
        state = try Codes.state(try r.byte())
        since = Timestamp(microseconds: try r.signed())
        let c = try r.byte()
        cause = c == 0 ? nil : try Codes.cause(c)
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in permission row") }
    }
}
