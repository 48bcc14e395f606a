import Hummingbird
import PermissionLedger

/// The events of a `POST /events` body, read as `permission-ledger import` reads a file: JSON Lines in the
/// form of docs/spec/EVENTS.md, `\n`-separated (a trailing `\r` is tolerated), blank lines and `#` comment
/// lines skipped, a UTF-8 byte order mark at the start ignored.
struct EventLines {
    /// The most problems reported, as `import` reports them.
    static let maxReported = 100

    /// The events, in body order.
    var events: [PermissionEvent] = []
    /// The 1-based line of the body each event came from: names the line of a rejection.
    var lineNumbers: [Int] = []

    /// Decodes every line of `body`.
    ///
    /// - Throws: ``APIError`` 400 when any line does not decode: `error` is the first problem as
    ///   `line N: reason`, `problems` lists every one (up to ``maxReported``, then a line saying there are
    ///   more). Nothing is appended then.
    init(body: ByteBuffer) throws(APIError) {
        var problems: [String] = []
        body.withUnsafeReadableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = Self.byteOrderMarkLength(bytes)
            var lineNumber = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                lineNumber += 1
                switch Self.decode(UnsafeBufferPointer(rebasing: bytes[start..<end])) {
                case .success(let event?):
                    events.append(event)
                    lineNumbers.append(lineNumber)
                case .success(nil):
                    break
                case .failure(let rejection):
                    problems.append(Self.naming(line: lineNumber, rejection.description))
                }
                start = end + 1
            }
        }
        guard problems.isEmpty else {
            throw APIError(.badRequest, problems[0], details: .init(key: "problems", lines: Self.capped(problems)))
        }
    }

    /// One line's event; nil for a blank or `#` comment line.
    private static func decode(_ line: UnsafeBufferPointer<UInt8>) -> Result<PermissionEvent?, EventRejection> {
        Result { () throws(EventRejection) in try EventJSON.decode(line: line) }
    }

    /// `line N: reason`, the body's counterpart of import's `FILE:LINE: reason`.
    static func naming(line: Int, _ reason: String) -> String {
        "line \(line): \(reason)"
    }

    /// At most ``maxReported`` lines, then one saying there were more.
    static func capped(_ lines: [String]) -> [String] {
        guard lines.count > maxReported else { return lines }
        return Array(lines.prefix(maxReported)) + ["… and more problems; the first \(maxReported) are shown"]
    }

    /// 3 when `bytes` starts with a UTF-8 byte order mark, else 0.
    private static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }
}
