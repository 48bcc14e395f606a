import Foundation

/// An HTTP/1.1 client connection over a blocking POSIX socket: one request at a time, kept alive between
/// requests until the server says `Connection: close` or closes it.
final class HTTPConnection {
    enum Failure: Error {
        /// Nothing listens at the address: the server is gone (or not started).
        case refused
        /// The connection ended before a whole response arrived.
        case closed
        /// A socket call failed (including a timeout).
        case system(Int32)
        /// What arrived is not an HTTP/1.1 response this client understands.
        case malformed
    }

    /// A response's status and whether the server closes the connection after it.
    struct Response {
        var status: Int
        var closesConnection: Bool
    }

    private let descriptor: Int32
    /// Bytes received and not yet consumed.
    private var received: [UInt8] = []
    private let hostHeader: String

    /// Connects to `host`:`port`, with `timeout` for every send and receive.
    init(host: String, port: Int, timeout: Int = 10) throws(Failure) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else { throw .system(EHOSTUNREACH) }
        defer { freeaddrinfo(found) }
        descriptor = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw .system(errno) }
        hostHeader = "\(host):\(port)"
        var yes: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw code == ECONNREFUSED ? .refused : .system(code)
        }
    }

    deinit { Glibc.close(descriptor) }

    /// Sends `POST path` with `body` and reads the whole response.
    func post(_ path: String, body: [UInt8], contentType: String) throws(Failure) -> Response {
        let head = "POST \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n\r\n"
        try send(Array(head.utf8) + body)
        return try readResponse()
    }

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw .system(errno)
            }
            offset += sent
        }
    }

    /// Reads more bytes into ``received``.
    private func receive() throws(Failure) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[0..<count])
                return
            }
            if count == 0 { throw .closed }
            if errno != EINTR { throw .system(errno) }
        }
    }

    private func readResponse() throws(Failure) -> Response {
        var headerEnd = Self.find([13, 10, 13, 10], in: received)
        while headerEnd == nil {
            try receive()
            headerEnd = Self.find([13, 10, 13, 10], in: received)
        }
        let head = String(decoding: received[0..<headerEnd!], as: UTF8.self)
        received.removeFirst(headerEnd! + 4)
        var lines = head.split(separator: "\r\n").makeIterator()
        let statusParts = (lines.next() ?? "").split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { throw .malformed }
        var length: Int?
        var chunked = false
        var closes = statusParts[0] == "HTTP/1.0"
        while let line = lines.next() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "content-length": length = Int(value)
            case "transfer-encoding": chunked = value.contains("chunked")
            case "connection": closes = value.contains("close")
            default: break
            }
        }
        if chunked {
            try skipChunkedBody()
        } else if let length {
            while received.count < length { try receive() }
            received.removeFirst(length)
        } else {
            // No length: the body ends with the connection.
            do { while true { try receive() } } catch .closed {}
            return Response(status: status, closesConnection: true)
        }
        return Response(status: status, closesConnection: closes)
    }

    /// Consumes a chunked body, up to and including its last chunk and trailers.
    private func skipChunkedBody() throws(Failure) {
        while true {
            var lineEnd = Self.find([13, 10], in: received)
            while lineEnd == nil {
                try receive()
                lineEnd = Self.find([13, 10], in: received)
            }
            let sizeText = String(decoding: received[0..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw .malformed }
            received.removeFirst(lineEnd! + 2)
            if size == 0 {
                // Trailers, if any, then an empty line.
                while true {
                    var end = Self.find([13, 10], in: received)
                    while end == nil {
                        try receive()
                        end = Self.find([13, 10], in: received)
                    }
                    received.removeFirst(end! + 2)
                    if end == 0 { return }
                }
            }
            while received.count < size + 2 { try receive() }
            received.removeFirst(size + 2)
        }
    }

    /// The offset of the first occurrence of `pattern` in `bytes`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if bytes[start..<(start + pattern.count)].elementsEqual(pattern) { return start }
        }
        return nil
    }
}
