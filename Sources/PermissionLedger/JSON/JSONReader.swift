import PermissionModel

/// A strict RFC 8259 reader for one line: no comments, no trailing commas, no duplicate keys,
/// valid UTF-8 only, and at most `maxDepth` levels of nesting.
struct JSONReader {
    static let maxDepth = 32

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var reader = JSONReader(bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("unexpected text after the JSON value") }
        return value
    }

    private func error(_ reason: String, at position: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(column: (position ?? index) + 1, reason: reason)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func describeByte(_ byte: UInt8) -> String {
        if byte == 0 { return "a NUL byte" }
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    private mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("the line ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            guard depth < Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
            return try object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
            return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case let byte: throw error("unexpected \(describeByte(byte)) where a value was expected")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        let start = index
        guard index + count <= bytes.count else { throw error("unknown word", at: start) }
        for k in 0..<count where bytes[index + k] != word.utf8Start[k] {
            throw error("unknown word", at: start)
        }
        index += count
    }

    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digitsRun() -> Int {
            let s = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - s
        }
        let first = index
        let integerDigits = digitsRun()
        guard integerDigits > 0 else { throw error("a number needs digits", at: start) }
        if integerDigits > 1, bytes[first] == 0x30 { throw error("a number must not start with 0", at: start) }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digitsRun() > 0 else { throw error("a number needs digits after '.'", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digitsRun() > 0 else { throw error("a number needs digits in its exponent", at: start) }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        // Fast path: no escapes.
        var runStart = index
        var scalars: [UInt8] = []
        while true {
            guard index < bytes.count else { throw error("a string is not closed", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                index += 1
                break
            }
            if byte < 0x20 {
                throw error("\(describeByte(byte)) inside a string must be escaped")
            }
            if byte == UInt8(ascii: "\\") {
                scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                try escape(into: &scalars)
                runStart = index
                continue
            }
            index += 1
        }
        guard let text = scalars.withUnsafeBytes(validUTF8) else {
            throw error("a string is not valid UTF-8", at: start)
        }
        return text
    }

    private mutating func escape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        let start = index
        index += 1
        guard index < bytes.count else { throw error("a string is not closed", at: start) }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var code = try hex4(at: start)
            if (0xD800..<0xDC00).contains(code) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a \\u escape holds an unpaired surrogate", at: start)
                }
                index += 2
                let low = try hex4(at: start)
                guard (0xDC00..<0xE000).contains(low) else { throw error("a \\u escape holds an unpaired surrogate", at: start) }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(code) {
                throw error("a \\u escape holds an unpaired surrogate", at: start)
            }
            out.append(contentsOf: Array(String(Character(Unicode.Scalar(code)!)).utf8))
        default:
            throw error("unknown escape \\\(describeByte(byte))", at: start)
        }
    }

    private mutating func hex4(at start: Int) throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("a \\u escape needs 4 hex digits", at: start) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw error("a \\u escape needs 4 hex digits", at: start)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func array(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("an array is not closed") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']' in an array, found \(describeByte(bytes[index]))")
        }
    }

    private mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        // The names seen, once an object has more than a few: a linear scan per name made an object of
        // 100,000 names (a 1 MiB line) take minutes.
        var names = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error(index < bytes.count ? "expected a quoted field name, found \(describeByte(bytes[index]))" : "an object is not closed")
            }
            let keyStart = index
            let key = try string()
            let repeated: Bool
            if members.count < 16 {
                repeated = members.contains(where: { $0.key == key })
            } else {
                if names.isEmpty { names = Set(members.map(\.key)) }
                repeated = !names.insert(key).inserted
            }
            if repeated {
                throw error("field \(quoted(key)) appears twice in one object", at: keyStart)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after a field name") }
            index += 1
            skipWhitespace()
            members.append((key, try value(depth: depth)))
            skipWhitespace()
            guard index < bytes.count else { throw error("an object is not closed") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}' in an object, found \(describeByte(bytes[index]))")
        }
    }
}
