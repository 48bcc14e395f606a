import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A file read or written whole. A read takes only a regular file of at most a stated size, so that a FIFO or a
/// device put in its place is refused, not waited on or read without end, and a huge one is refused before it is
/// read: a bundle's files and an auditor's verifier key are read by path; key files, once ``OwnerOnlyFile`` has
/// opened and checked them, by descriptor. A write goes on after a signal and after a short write, until every
/// byte is written or the system says why not.
package enum WholeFile {
    /// Why the file was not read.
    package enum Problem: Error, Equatable {
        /// There is nothing at the path, or it cannot be opened or read: `errno`.
        case unreadable(Int32)
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
        guard fd >= 0 else { throw .unreadable(errno) }
        defer { close(fd) }
        return try read(fd, limit: limit)
    }

    /// The bytes of the regular file open at `fd`, of at most `limit` bytes, read from its start with `pread`
    /// (the descriptor's offset is not moved), again after a signal and on until the end after a short read.
    package static func read(_ fd: Int32, limit: Int) throws(Problem) -> [UInt8] {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        guard info.st_size <= limit else { throw .tooLarge(Int64(info.st_size)) }
        // Read up to one byte past its size, to see whether it grew since.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + count, $0.count - count, off_t(count)) }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { throw .unreadable(errno) }
            if read == 0 { break }
            count += read
        }
        guard count <= info.st_size else { throw .changed }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Why a copy stopped: its source could not be read, or its destination written (`errno`).
    enum CopyProblem: Error, Equatable {
        case unreadable(Int32)
        case unwritable(Int32)
    }

    /// Copies the file open at `source`, from its start (read with `pread`: its offset is not moved), to `destination`
    /// at its offset, a mebibyte at a time, so that a large file is never held in memory; again after a signal, and on
    /// after a short read or write.
    static func copy(from source: Int32, to destination: Int32) -> CopyProblem? {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, offset) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return .unreadable(errno) }
            if count == 0 { return nil }
            if let code = write(Array(buffer[..<count]), to: destination) { return .unwritable(code) }
            offset += off_t(count)
        }
    }

    /// Writes all of `bytes` to `fd` at its offset, again after a signal and on after a short write; `errno` when
    /// a write fails.
    static func write(_ bytes: [UInt8], to fd: Int32) -> Int32? {
        var count = 0
        while count < bytes.count {
            let written = bytes.withUnsafeBytes { writeBytes(fd, $0.baseAddress! + count, $0.count - count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return written < 0 ? errno : EIO }
            count += written
        }
        return nil
    }
}

/// `write(2)`, outside ``WholeFile`` whose own `write` would otherwise hide it.
private func writeBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
