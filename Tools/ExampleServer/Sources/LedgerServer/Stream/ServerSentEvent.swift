import Hummingbird

/// One message of a `text/event-stream` (the WHATWG HTML standard's server-sent events): `id: SEQ`, then
/// `data: LINE` with the event's JSON line, then a blank line.
///
/// A JSON line of the library never holds a line break (`EventJSON` escapes control characters and U+2028,
/// U+2029), so it fits one `data:` field.
struct ServerSentEvent: Sendable {
    /// The event's `seq`: a client that reconnects sends it back as `Last-Event-ID`.
    var id: UInt64
    /// The event's JSON line, as `permission-ledger export` writes it.
    var data: String

    /// The message's bytes.
    var buffer: ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(data.utf8.count + 32)
        buffer.writeString("id: \(id)\ndata: ")
        buffer.writeString(data)
        buffer.writeString("\n\n")
        return buffer
    }
}
