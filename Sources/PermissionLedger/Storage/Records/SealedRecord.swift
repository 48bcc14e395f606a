internal import Crypto
import Foundation
import PermissionModel

/// An event record of format version 2: its personal fields sealed apart (docs/STORAGE.md, "Event records, format
/// version 2").
///
/// The record is in two parts. The **chained** part, which the chain hash covers: the version byte 2, the header
/// and payload of version 1 without the personal fields (``EventRecord/write(_:recordedAt:into:envelope:)``), then
/// `u8` 0 when the event has no personal field, or 1 and the 32-byte commitment to them (``SealedFields``). The
/// **trailer**, which no chain hash covers and which an erasure may change: the sealed personal fields (`varint`
/// length, then nonce, ciphertext and tag), then `varint` count and one 16-byte handle token per handle of the
/// event, in its order (``DataKeys/token(_:tokenKey:)``), then the first 8 bytes of SHA-256 over the trailer
/// before them, so that `verify`, which holds no key, finds a damaged trailer as it finds damaged chained bytes.
/// Stored, the record is the chained part, the trailer, and the trailer's length as 4 bytes big-endian.
@_spi(StorageEngine) public struct SealedRecord: Hashable, Sendable {
    static let version: UInt8 = 2

    /// The bytes the chain hash covers.
    public var chained: [UInt8]
    /// The sealed personal fields: nonce, ciphertext and tag; empty when the event has none, or they are erased.
    public var box: [UInt8]
    /// The tokens of the event's handles, 16 bytes each, in the event's order.
    public var tokens: [UInt8]

    public init(chained: [UInt8], box: [UInt8], tokens: [UInt8]) {
        self.chained = chained
        self.box = box
        self.tokens = tokens
    }

    /// The tokens of the event's handles, one array of 16 bytes each.
    var tokenList: [[UInt8]] { tokens.withUnsafeBytes { Self.tokenList($0) } }

    /// `tokens`, one array of 16 bytes each.
    static func tokenList(_ tokens: UnsafeRawBufferPointer) -> [[UInt8]] {
        stride(from: 0, to: tokens.count, by: DataKeys.tokenSize).map { Array(tokens[$0..<($0 + DataKeys.tokenSize)]) }
    }

    /// The record of an erased event given in its exported form: its envelope and commitment, no sealed fields, and
    /// the tokens given. Its chained part, so its hash, is the one the event had where it was erased.
    static func erased(_ event: PermissionEvent, recordedAt: Timestamp, fields: ErasedFields) -> SealedRecord {
        SealedRecord(chained: chainedBytes(event, recordedAt: recordedAt, commitment: fields.commitment), box: [], tokens: fields.tokens.flatMap { $0 })
    }

    /// Seals `event`, recorded at `recordedAt`: its envelope and the commitment to its personal fields, the fields
    /// sealed under `eventKey`, and its handles' tokens by `tokens`. Returns the record and the commitment's
    /// salt (which the sealed box holds too). Each key is asked for only when the event needs it: an event with no
    /// personal field (an answer, a permission change) makes and reads no key.
    static func seal(
        _ event: PermissionEvent, seq: UInt64, recordedAt: Timestamp,
        eventKey: @autoclosure () throws -> SymmetricKey, tokens tokenHasher: @autoclosure () throws -> TokenHasher, secrets: SecretSource
    ) throws -> (record: SealedRecord, salt: [UInt8]?) {
        var hasher: TokenHasher?
        var (record, salt, sealing) = try prepare(
            event, seq: seq, recordedAt: recordedAt, eventKey: try eventKey(),
            token: { handle in
                let made = try hasher ?? tokenHasher()
                hasher = made
                return made.token(handle)
            },
            secrets: secrets)
        if let sealing { record.box = try sealing.sealed() }
        return (record, salt)
    }

    /// ``seal(_:seq:recordedAt:eventKey:tokens:secrets:)`` but for the sealed box itself: the record with its box
    /// empty, the salt, and what sealing the box takes (`nil` when the event has no personal field), so that the
    /// box can be sealed on another thread. The record is whole once the box is put in it. `token` gives the token
    /// of each of the event's handles (a writer keeps those it made).
    ///
    /// `ahead`: a salt and commitment made before the rules reached the event (``CommitmentsAhead``), taken when
    /// they were made for exactly these fields and the event gives no salt of its own.
    static func prepare(
        _ event: PermissionEvent, seq: UInt64, recordedAt: Timestamp,
        eventKey: @autoclosure () throws -> SymmetricKey, token: (CommunicationHandle) throws -> [UInt8], secrets: SecretSource,
        ahead: @autoclosure () -> CommitmentsAhead.Made? = nil
    ) throws -> (record: SealedRecord, salt: [UInt8]?, sealing: SealedFields.Sealing?) {
        let fields = PersonalFields(of: event)
        let encoded = fields.isEmpty ? [] : fields.encoded()
        var salt: [UInt8]?
        var commitment: [UInt8]?
        if !fields.isEmpty {
            if let given = event.salt {
                salt = given
                commitment = SealedFields.commitment(toEncoded: encoded, salt: given)
            } else if let ahead = ahead(), ahead.fields == encoded {
                salt = ahead.salt
                commitment = ahead.commitment
            } else {
                let committed = SealedFields.commit(encoded: encoded, secrets: secrets, seq: seq)
                salt = committed.salt
                commitment = committed.commitment
            }
        }
        let chained = chainedBytes(event, recordedAt: recordedAt, commitment: commitment)
        let sealing = try salt.map {
            try SealedFields.sealing(encoded: encoded, salt: $0, key: try eventKey(), additionalData: chained, secrets: secrets, seq: seq)
        }
        var tokens: [UInt8] = []
        let handles = handles(of: event)
        for handle in handles { tokens += try token(handle) }
        return (SealedRecord(chained: chained, box: [], tokens: tokens), salt, sealing)
    }

    /// The chained part of `event`'s record with `commitment` (`nil` when it has no personal field). With the salt
    /// given in an export, this is how an import rebuilds the same chained bytes, and the same hash.
    static func chainedBytes(_ event: PermissionEvent, recordedAt: Timestamp, commitment: [UInt8]?) -> [UInt8] {
        var w = RecordWriter()
        w.byte(version)
        EventRecord.write(event, recordedAt: recordedAt, into: &w, envelope: true)
        if let commitment {
            w.byte(1)
            w.bytes += commitment
        } else {
            w.byte(0)
        }
        return w.bytes
    }

    /// The handles of `event` whose values are personal, in the order of its personal fields.
    static func handles(of event: PermissionEvent) -> [CommunicationHandle] {
        switch event.payload {
        case .questionAsked(let question): question.topic.handles
        case .handlesObserved(let checked, let known): checked + known
        default: []
        }
    }

    /// The envelope of a chained part: the event with its personal fields empty, and the commitment when it has one.
    public static func envelope(_ chained: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> (event: PermissionEvent, commitment: [UInt8]?) {
        var absent = PersonalValueSource.absent
        let (event, commitment) = try read(chained, personal: &absent)
        if commitment == nil, !PersonalFields(of: event).isEmpty {
            throw .init(reason: "an event with personal fields and no commitment")
        }
        return (event, commitment)
    }

    /// The event of a chained part, its personal values taken from `personal`, and the commitment when it has one.
    private static func read(_ chained: UnsafeRawBufferPointer, personal: inout PersonalValueSource) throws(EventRecord.DecodingError) -> (event: PermissionEvent, commitment: [UInt8]?) {
        var r = RecordReader(chained)
        let header = try EventRecord.readHeader(&r, id: true)
        guard header.version == version else { throw .init(reason: "a version \(header.version) record read as version \(version)") }
        let event = try EventRecord.readBody(header, from: &r, personal: &personal)
        let commitment: [UInt8]?
        switch try r.byte() {
        case 0: commitment = nil
        case 1: commitment = Array(try r.raw(32))
        case let other: throw .init(reason: "bad commitment flag \(other)")
        }
        guard r.isAtEnd else { throw .init(reason: "\(r.remaining) unexpected trailing bytes") }
        return (event, commitment)
    }

    /// Whose event a chained part holds and when it was recorded: what names the key of its sealed fields
    /// (``KeyRing/eventKey(_:_:subject:recordedAt:seq:)``), read without the rest of the record.
    static func owner(_ chained: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> (subject: String, recordedAt: Timestamp) {
        var r = RecordReader(chained)
        let header = try EventRecord.readHeader(&r, id: false)
        _ = try r.raw(try r.count())
        return (try r.text(), header.recordedAt)
    }

    /// Refuses sealed fields where the chained part commits to none: no writer makes such a record, and a reader
    /// with no key for it would take it for an event without personal fields.
    static func checkBox(_ boxSize: Int, commitment: [UInt8]?) throws(EventRecord.DecodingError) {
        guard commitment != nil || boxSize == 0 else { throw .init(reason: "sealed personal fields and no commitment") }
    }

    /// The event with its personal fields, opened with `eventKey`, and the commitment's salt.
    ///
    /// Without `salted`, the event comes without its salt, and its fields are not checked against the
    /// commitment: a query that shows the fields and not the salt leaves the check out, as the box's tag already
    /// authenticates the fields together with the chained bytes, which hold the commitment. What hands the salt out
    /// (an export, a bundle) checks it, so that a salt never vouches for fields it does not fit.
    func open(eventKey: SymmetricKey, salted: Bool = true) throws(EventRecord.DecodingError) -> (event: PermissionEvent, salt: [UInt8]?) {
        try chained.withUnsafeBytes { chained in
            box.withUnsafeBytes { box in
                Result { () throws(EventRecord.DecodingError) in try Self.open(chained: chained, box: box, eventKey: eventKey, salted: salted) }
            }
        }.get()
    }

    /// ``open(eventKey:salted:)`` of a record read in place (``parts(of:)``). The fields are read from the opened
    /// box as the event's decoding asks for them, so that the event is made once, with its values.
    static func open(chained: UnsafeRawBufferPointer, box: UnsafeRawBufferPointer, eventKey: SymmetricKey, salted: Bool) throws(EventRecord.DecodingError) -> (event: PermissionEvent, salt: [UInt8]?) {
        guard !box.isEmpty else {
            let (envelope, commitment) = try Self.envelope(chained)
            guard commitment == nil else { throw .init(reason: "the personal fields are erased") }
            return (envelope, nil)
        }
        let plaintext = try SealedFields.opened(box, key: eventKey, additionalData: chained)
        let opened = plaintext.withUnsafeBytes { bytes in
            Result { () throws(EventRecord.DecodingError) -> (event: PermissionEvent, salt: [UInt8]?) in
                guard bytes.count >= SealedFields.saltSize else { throw .init(reason: "the sealed personal fields are too short") }
                let encoded = UnsafeRawBufferPointer(rebasing: bytes[SealedFields.saltSize...])
                var personal = try PersonalValueSource.opened(encoded)
                var (event, commitment) = try read(chained, personal: &personal)
                try personal.finish()
                guard let commitment else { throw .init(reason: "sealed personal fields and no commitment") }
                guard salted else { return (event, nil) }
                let salt = Array(bytes.prefix(SealedFields.saltSize))
                guard SealedFields.commitment(toEncoded: Array(encoded), salt: salt) == commitment else {
                    throw .init(reason: "the personal fields do not match their commitment")
                }
                event.salt = salt
                return (event, salt)
            }
        }
        return try opened.get()
    }

    /// The record as stored after its chain hash.
    public func stored() -> [UInt8] {
        var w = RecordWriter(capacity: chained.count + box.count + tokens.count + 12)
        w.bytes += chained
        let trailerStart = w.bytes.count
        w.unsigned(UInt64(box.count))
        w.bytes += box
        w.unsigned(UInt64(tokens.count / DataKeys.tokenSize))
        w.bytes += tokens
        w.bytes += Self.checksum(w.bytes[trailerStart...])
        let trailer = UInt32(w.bytes.count - trailerStart)
        withUnsafeBytes(of: trailer.bigEndian) { w.bytes += $0 }
        return w.bytes
    }

    /// The part of a stored record that the chain hash covers: all of a version 1 record, the chained part of a
    /// version 2 one.
    public static func chainedPart(of stored: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> UnsafeRawBufferPointer {
        guard let first = stored.first else { throw .init(reason: "an empty record") }
        guard first == version else { return stored }
        return UnsafeRawBufferPointer(rebasing: stored[..<(try trailerStart(stored))])
    }

    private static func trailerStart(_ stored: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> Int {
        guard stored.count >= 5 else { throw .init(reason: "record ends early") }
        var length = 0
        for b in stored.suffix(4) { length = length << 8 | Int(b) }
        guard length <= stored.count - 5 else { throw .init(reason: "the record's trailer is longer than the record") }
        return stored.count - 4 - length
    }

    /// Checks the checksum of a stored version 2 record's trailer.
    static func checkTrailer(_ stored: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        let start = try trailerStart(stored)
        guard stored.count - 4 - start >= 8 else { throw .init(reason: "the record's trailer is too short") }
        let end = stored.count - 12
        guard checksum(stored[start..<end]).elementsEqual(stored[end..<(stored.count - 4)]) else {
            throw .init(reason: "the record's trailer does not match its checksum")
        }
    }

    /// The first 8 bytes of SHA-256 over a trailer's bytes before its checksum.
    private static func checksum(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        Array(SHA256.hash(data: Array(bytes)).prefix(8))
    }

    /// Reads a stored version 2 record, checking its trailer's checksum unless `checkingTrailer` is false: a
    /// reader that opens the sealed fields, which their tag authenticates, checks it only where it reads the
    /// tokens (``checkTrailer(_:)``).
    public init(stored: UnsafeRawBufferPointer, checkingTrailer: Bool = true) throws(EventRecord.DecodingError) {
        let parts = try Self.parts(of: stored, checkingTrailer: checkingTrailer)
        chained = Array(parts.chained)
        box = Array(parts.box)
        tokens = Array(parts.tokens)
    }

    /// A stored version 2 record's chained part, sealed box and tokens, read in place (see
    /// ``init(stored:checkingTrailer:)``).
    static func parts(of stored: UnsafeRawBufferPointer, checkingTrailer: Bool = true) throws(EventRecord.DecodingError)
        -> (chained: UnsafeRawBufferPointer, box: UnsafeRawBufferPointer, tokens: UnsafeRawBufferPointer) {
        let start = try Self.trailerStart(stored)
        guard stored.count - 4 - start >= 8 else { throw .init(reason: "the record's trailer is too short") }
        let end = stored.count - 12
        if checkingTrailer { try Self.checkTrailer(stored) }
        var r = RecordReader(UnsafeRawBufferPointer(rebasing: stored[start..<end]))
        let box = try r.raw(try r.count())
        let tokenCount = try r.count()
        guard tokenCount <= r.remaining / DataKeys.tokenSize else { throw .init(reason: "count \(tokenCount) exceeds the record") }
        let tokens = try r.raw(tokenCount * DataKeys.tokenSize)
        guard r.isAtEnd else { throw .init(reason: "\(r.remaining) unexpected trailing bytes after the tokens") }
        return (UnsafeRawBufferPointer(rebasing: stored[..<start]), box, tokens)
    }

    /// The event as the tables hold it, read from the record without a key: its envelope, each handle's value
    /// replaced by its token (``DataKeys/tokenHandle(kind:token:)``). What a rebuild and `verify` replay.
    public func tokenizedEvent() throws(EventRecord.DecodingError) -> PermissionEvent {
        let envelope = try chained.withUnsafeBytes { bytes in
            Result { () throws(EventRecord.DecodingError) in try Self.envelope(bytes) }
        }.get()
        try Self.checkBox(box.count, commitment: envelope.commitment)
        guard tokens.count == Self.handles(of: envelope.event).count * DataKeys.tokenSize else {
            throw .init(reason: "the record holds \(tokens.count / DataKeys.tokenSize) handle tokens for \(Self.handles(of: envelope.event).count) handles")
        }
        var index = 0
        return Self.replacingHandles(of: envelope.event) { handle in
            defer { index += DataKeys.tokenSize }
            return DataKeys.tokenHandle(kind: handle.kind, token: tokens[index..<(index + DataKeys.tokenSize)])
        }
    }

    /// Checks that the stored bytes are exactly what this build writes for what they hold: the chained part
    /// re-encoded from its envelope and commitment, and the trailer in its one form.
    func checkCanonical(stored: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        let (envelope, commitment) = try chained.withUnsafeBytes { bytes in
            Result { () throws(EventRecord.DecodingError) in try Self.envelope(bytes) }
        }.get()
        guard Self.chainedBytes(envelope, recordedAt: envelope.recordedAt!, commitment: commitment) == chained,
              self.stored().elementsEqual(stored) else {
            throw .init(reason: "the stored record is not in canonical form")
        }
    }

    /// `event` with each handle whose value is personal (``handles(of:)``) replaced by `transform` of it, in order.
    static func replacingHandles(of event: PermissionEvent, _ transform: (CommunicationHandle) -> CommunicationHandle) -> PermissionEvent {
        var result = event
        switch event.payload {
        case .questionAsked(let question):
            guard case .communication(let topic) = question.topic else { return event }
            let people = topic.personInformation.map { PersonInformation(handle: transform($0.handle), nameComponents: $0.nameComponents) }
            let replaced = PermissionQuestion(
                uncheckedID: question.id, topic: .communication(CommunicationTopic(uncheckedPersonInformation: people, actions: topic.actions)),
                choices: question.choices, defaultChoiceID: question.defaultChoiceID, expiresAt: question.expiresAt)
            result.payload = .questionAsked(replaced!)
        case .handlesObserved(let checked, let known):
            let newChecked = checked.map(transform)
            result.payload = .handlesObserved(checked: newChecked, known: known.map(transform))
        default:
            break
        }
        return result
    }
}
