import Foundation
import PermissionModel

/// Where the decoding of a record's body (``EventRecord/readBody(_:from:personal:)``) takes the event's personal
/// values from: the record itself (format version 1), nowhere (a version 2 record's envelope alone: the values
/// are left empty), or the canonical bytes of its opened personal fields (``PersonalFields``), which are read in
/// the event's order as the body asks for them, so that the event is made once, with its values.
struct PersonalValueSource {
    private enum Mode { case inline, absent, opened }

    private let mode: Mode
    private var fields: RecordReader
    /// The next entry of the opened fields, its code read and its value not yet taken.
    private var pending: (field: PersonalFields.Field, value: UnsafeRawBufferPointer)?

    private init(mode: Mode, fields: UnsafeRawBufferPointer) {
        self.mode = mode
        self.fields = RecordReader(fields)
    }

    /// The values are in the record, where format version 1 writes them.
    static var inline: PersonalValueSource { PersonalValueSource(mode: .inline, fields: UnsafeRawBufferPointer(start: nil, count: 0)) }

    /// The record is an envelope and its values are not at hand: handles get an empty value, people no name,
    /// texts are empty and messages absent.
    static var absent: PersonalValueSource { PersonalValueSource(mode: .absent, fields: UnsafeRawBufferPointer(start: nil, count: 0)) }

    /// The values are the canonical bytes of the event's opened personal fields, which must outlive the source.
    static func opened(_ bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> PersonalValueSource {
        var source = PersonalValueSource(mode: .opened, fields: bytes)
        try source.advance()
        return source
    }

    private mutating func advance() throws(EventRecord.DecodingError) {
        guard !fields.isAtEnd else {
            pending = nil
            return
        }
        let code = try fields.byte()
        guard let field = PersonalFields.Field(rawValue: code) else { throw .init(reason: "unknown personal field \(code)") }
        pending = (field, try fields.raw(try fields.count()))
    }

    /// The next opened value, which must be of `field`.
    private mutating func take(_ field: PersonalFields.Field) throws(EventRecord.DecodingError) -> String {
        guard let value = try takeIf(field) else {
            throw .init(reason: "personal fields do not fit the event: expected \(field), found \(pending.map { "\($0.field)" } ?? "none")")
        }
        return value
    }

    /// The next opened value if it is of `field`.
    private mutating func takeIf(_ field: PersonalFields.Field) throws(EventRecord.DecodingError) -> String? {
        guard let entry = pending, entry.field == field else { return nil }
        guard let value = validUTF8(entry.value) else { throw .init(reason: "text is not UTF-8") }
        try advance()
        return value
    }

    /// A handle: its kind from the record, its value from where the values are.
    mutating func handle(_ r: inout RecordReader) throws(EventRecord.DecodingError) -> CommunicationHandle {
        switch mode {
        case .inline:
            return try r.handle()
        case .absent:
            return CommunicationHandle(normalizedValue: "", kind: try Codes.kind(try r.byte()))
        case .opened:
            let kind = try Codes.kind(try r.byte())
            let value = try take(.handleValue)
            guard !value.isEmpty else { throw .init(reason: "an empty handle") }
            return CommunicationHandle(normalizedValue: value, kind: kind)
        }
    }

    /// A person's name, if they have one.
    mutating func name(_ r: inout RecordReader) throws(EventRecord.DecodingError) -> PersonNameComponents? {
        switch mode {
        case .inline:
            return try r.name()
        case .absent:
            return nil
        case .opened:
            guard try takeIf(.name) != nil else { return nil }
            var components = PersonNameComponents()
            components.namePrefix = try takeIf(.namePrefix)
            components.givenName = try takeIf(.givenName)
            components.middleName = try takeIf(.middleName)
            components.familyName = try takeIf(.familyName)
            components.nameSuffix = try takeIf(.nameSuffix)
            components.nickname = try takeIf(.nickname)
            return components
        }
    }

    /// A text that is always there: a description, a choice's title.
    mutating func text(_ r: inout RecordReader, _ field: PersonalFields.Field) throws(EventRecord.DecodingError) -> String {
        switch mode {
        case .inline: try r.text()
        case .absent: ""
        case .opened: try take(field)
        }
    }

    /// A text that may be absent: an ask failure's message.
    mutating func optionalText(_ r: inout RecordReader, _ field: PersonalFields.Field) throws(EventRecord.DecodingError) -> String? {
        switch mode {
        case .inline: try r.optionalText()
        case .absent: nil
        case .opened: try takeIf(field)
        }
    }

    /// Checks that the body took every opened value.
    func finish() throws(EventRecord.DecodingError) {
        guard pending == nil else { throw .init(reason: "personal fields left over after the event's last one") }
    }
}
