import Foundation

/// A file that ids are appended to, one line per `write(2)` with `O_APPEND`: each line is in the file (the
/// kernel's page cache) as soon as `append` returns, so that a crash or a SIGTERM of the server never loses
/// one, and lines from many threads never interleave.
final class IDLog: @unchecked Sendable {
    private let descriptor: Int32

    /// Opens (creating or truncating) the file at `path`.
    init(path: String) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            FileHandle.standardError.write(Data("ledger-load: \(path): cannot be written\n".utf8))
            exit(1)
        }
    }

    deinit { close(descriptor) }

    /// Appends `id` and a newline.
    func append(_ id: String) {
        let line = Array((id + "\n").utf8)
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written != line.count {
            FileHandle.standardError.write(Data("ledger-load: an id could not be written\n".utf8))
            exit(1)
        }
    }
}
