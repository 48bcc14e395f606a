import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension AuditReport {
    /// Writes `text` (a report or an index) to `path`, mode 0600 (a report holds a child's personal values), whole
    /// or not at all: into a new file beside it, flushed, then renamed over `path`. A symbolic link at `path` is
    /// replaced, never followed.
    ///
    /// - Throws: ``LedgerError`` (`.storage`) naming the file and why.
    public static func writeFile(_ text: String, to path: String) throws {
        let temporary = directory(holding: path) + "/.\((path as NSString).lastPathComponent).\(getpid()).partial"
        func failure(_ what: String) -> LedgerError {
            LedgerError(.storage, "\(path): cannot be \(what): \(String(cString: strerror(errno)))")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("written") }
        var written = false
        defer {
            close(fd)
            if !written { unlink(temporary) }
        }
        if let code = WholeFile.write(Array(text.utf8), to: fd) {
            errno = code
            throw failure("written")
        }
        guard fsync(fd) == 0 else { throw failure("flushed") }
        guard rename(temporary, path) == 0 else { throw failure("written") }
        written = true
    }
}
