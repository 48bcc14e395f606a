import Foundation

/// A handle's token (``DataKeys/token(_:tokenKey:)``) as the tables hold it, by its text (base64url without
/// padding, 22 characters), in three words read big-endian: compared in the order of the text's bytes without an
/// allocation, and read from a row without decoding it.
struct HandleToken: Comparable {
    private let words: (UInt64, UInt64, UInt64)

    /// The length of a token's text.
    static let textSize = 22

    /// The token of `bytes`, which hold exactly ``DataKeys/tokenSize`` bytes.
    init(bytes: some Collection<UInt8>) {
        precondition(bytes.count == DataKeys.tokenSize, "a handle token is \(DataKeys.tokenSize) bytes")
        var text = DataKeys.base64URL(bytes)
        self = text.withUTF8 { Self(text: UnsafeRawBufferPointer($0))! }
    }

    /// The token whose text is `text`; `nil` when `text` is not 22 bytes long, so not a token's.
    init?(text: UnsafeRawBufferPointer) {
        guard text.count == Self.textSize else { return nil }
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: text) }
        self.words = (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1), UInt64(bigEndian: words.2))
    }

    static func == (a: HandleToken, b: HandleToken) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2
    }

    /// In the order of the texts' bytes.
    static func < (a: HandleToken, b: HandleToken) -> Bool {
        (a.words.0, a.words.1, a.words.2) < (b.words.0, b.words.1, b.words.2)
    }
}
