import Foundation
@testable import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// A subject's handle values by token, as queries look them up: every value found under its kind and token, and
/// nothing else; tokens ordered as the bytes of their texts.
@Suite struct HandleValueIndexTests {
    static func token(_ seed: Int) -> (bytes: [UInt8], token: HandleToken) {
        var random = SeededRandom(seed: UInt64(seed))
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
        return (bytes, HandleToken(bytes: bytes))
    }

    @Test func tokensOrderAsTheBytesOfTheirTexts() {
        let tokens = (0..<300).map { Self.token($0) }
        for (a, b) in zip(tokens, tokens.dropFirst(7)) {
            let texts = (Array(DataKeys.base64URL(a.bytes).utf8), Array(DataKeys.base64URL(b.bytes).utf8))
            #expect((a.token < b.token) == texts.0.lexicographicallyPrecedes(texts.1))
            #expect((a.token == b.token) == (texts.0 == texts.1))
        }
    }

    @Test func everyValueIsFoundUnderItsKindAndTokenAndNothingElse() {
        let kinds: [CommunicationHandle.Kind] = [.phoneNumber, .emailAddress, .custom]
        let entries = (0..<200).map { n in
            (token: Self.token(n).token, handle: CommunicationHandle(normalizedValue: "value-\(n)", kind: kinds[n % 3]))
        }
        let index = HandleValueIndex(entries.shuffled())
        #expect(index.handles.count == entries.count)
        for entry in entries {
            #expect(index.handle(kind: entry.handle.kind, token: entry.token) == entry.handle)
            let otherKind = kinds.first { $0 != entry.handle.kind }!
            #expect(index.handle(kind: otherKind, token: entry.token) == nil)
        }
        for n in 200..<260 {
            #expect(index.handle(kind: kinds[n % 3], token: Self.token(n).token) == nil)
        }
        #expect(HandleValueIndex([]).handle(kind: .custom, token: Self.token(1).token) == nil)
    }

    @Test func ofTwoEntriesOfOneTokenTheLaterHolds() {
        let token = Self.token(5).token
        let index = HandleValueIndex([
            (token, CommunicationHandle(normalizedValue: "first", kind: .custom)),
            (Self.token(6).token, CommunicationHandle(normalizedValue: "other", kind: .custom)),
            (token, CommunicationHandle(normalizedValue: "second", kind: .custom)),
        ])
        #expect(index.handles.count == 2)
        #expect(index.handle(kind: .custom, token: token)?.value == "second")
    }
}
