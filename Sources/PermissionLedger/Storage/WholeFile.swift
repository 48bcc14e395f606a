import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A small file handed over from elsewhere (a bundle's file, an auditor's verifier key): read whole only when it is
/// a regular file of at most a stated size, so that a FIFO or a device put in its place is refused, not waited on or
/// read without end, and a huge one is refused before it is read.
package enum WholeFile {
    /// Why the file was not read.
    package enum Problem: Error, Equatable {
        /// There is nothing at the path, or it cannot be opened.
        case unreadable
        /// A directory, a FIFO, a device or a socket.
        case notARegularFile
        /// Larger than the limit: its size.
        case tooLarge(Int64)
        /// It grew while it was read.
        case changed
    }

    /// The bytes of the regular file at `path`, of at most `limit` bytes.
    package static func read(_ path: String, limit: Int) throws(Problem) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        guard info.st_size <= limit else { throw .tooLarge(Int64(info.st_size)) }
        // Read up to one byte past its size, to see whether it grew since.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + count, $0.count - count, off_t(count)) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw .unreadable }
            if read == 0 { break }
            count += read
        }
        guard count <= info.st_size else { throw .changed }
        bytes.removeSubrange(count...)
        return bytes
    }
}
