internal import Crypto
import Foundation
import PermissionModel

/// A version of one question's projected state, stored under (question id, seq).
@_spi(StorageEngine) public struct QuestionRow: Hashable {
    public var askedSeq: UInt64
    public var subject: String
    public var askedAt: Timestamp
    public var expiresAt: Timestamp?
    public var state: QuestionState
    public var late = false
    public var expiredByEvent = false
    public var resolvedAt: Timestamp?
    public var choiceID: String?
    public var via: AnswerVia?
    public var error: AskError?

    private static let states: [QuestionState] = [.pending, .approved, .denied, .canceled, .failed, .expired]

    public func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 64)
        w.byte(1)
        w.unsigned(askedSeq)
        w.text(subject)
        w.signed(askedAt.microseconds)
        w.optionalTime(expiresAt)
        w.byte(UInt8(Self.states.firstIndex(of: state)! + 1))
        w.byte((late ? 1 : 0) | (expiredByEvent ? 2 : 0))
        w.optionalTime(resolvedAt)
        w.optionalText(choiceID)
        w.byte(via.map(Codes.via) ?? 0)
        w.byte(error.map { Codes.askError($0.code) } ?? 0)
        if let error { w.optionalText(error.message) }
        return w.bytes
    }

    public init(askedSeq: UInt64, subject: String, askedAt: Timestamp, expiresAt: Timestamp?, state: QuestionState) {
        self.askedSeq = askedSeq
        self.subject = subject
        self.askedAt = askedAt
        self.expiresAt = expiresAt
        self.state = state
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown question row version") }
        askedSeq = try r.unsigned()
        subject = try r.text()
        askedAt = Timestamp(microseconds: try r.signed())
        expiresAt = try r.optionalTime()
        let s = try r.byte()
        guard s >= 1, Int(s) <= Self.states.count else { throw .init(reason: "unknown question state \(s)") }
        state = Self.states[Int(s) - 1]
        let flags = try r.byte()
        guard flags <= 3 else { throw .init(reason: "bad question flags") }
        late = flags & 1 != 0
        expiredByEvent = flags & 2 != 0
        resolvedAt = try r.optionalTime()
        choiceID = try r.optionalText()
        let v = try r.byte()
        via = v == 0 ? nil : try Codes.via(v)
        let e = try r.byte()
        error = e == 0 ? nil : AskError(code: try Codes.askError(e), message: try r.optionalText())
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in question row") }
    }
}
