import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The files that hold keys: regular files of the effective user, readable and writable by no one else
/// (mode 0600), opened without following a symbolic link.
enum OwnerOnlyFile {
    /// Why a key file cannot be used, in plain words, naming the file and what to do.
    struct Problem: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "\(path): \(reason)" }
    }

    /// Opens the existing file at `path` (`O_RDONLY` or `O_RDWR`) after checking what it is: a regular file with
    /// one name, owned by the effective user, with no access for group or others. Returns `nil` when there is
    /// no file at `path`. Opened without blocking, so that a FIFO planted in its place is refused, not waited on.
    ///
    /// The one second name accepted is the temporary name ``create(_:writing:)`` gives the file, left behind when
    /// the process that made it died between linking the file to `path` and removing that name. It is removed
    /// when `removingLeftover` (a writer's open); a reader leaves it, as it writes nothing.
    static func openExisting(_ path: String, writable: Bool, removingLeftover: Bool = false) throws(Problem) -> Int32? {
        let fd = openFile(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw Problem(path: path, reason: "is a symbolic link; a key file must be a regular file") }
            throw Problem(path: path, reason: "cannot be opened: \(String(cString: strerror(code)))")
        }
        do throws(Problem) {
            if let leftover = try check(fd, path: path), removingLeftover, unlink(leftover) == 0 {
                syncDirectory(of: path)
                // Whatever named the file meanwhile is refused as any second name is.
                var info = stat()
                if fstat(fd, &info) == 0, info.st_nlink != 1 { throw hardLink(path, names: info.st_nlink) }
            }
        } catch {
            close(fd)
            throw error
        }
        // A regular file: reads and writes block as usual again.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Creates the file at `path` with `contents`, mode 0600, atomically: it appears whole or not at all (written
    /// under a temporary name, flushed, then linked, which fails if another process created it meanwhile).
    /// Returns `false` when a file already exists at `path`.
    static func create(_ path: String, contents: [UInt8]) throws(Problem) -> Bool {
        try create(path) { fd in
            WholeFile.write(contents, to: fd).map { Problem(path: path, reason: "cannot be written: \(String(cString: strerror($0)))") }
        }
    }

    /// ``create(_:contents:)`` with what `write` writes into the new file open at the descriptor it is given: it
    /// returns the problem that stops it, and the file is then not made.
    static func create(_ path: String, writing write: (Int32) -> Problem?) throws(Problem) -> Bool {
        let temporary = path + temporaryMark + "\(getpid())"
        unlink(temporary)
        let fd = openFile(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Problem(path: path, reason: "cannot be created: \(String(cString: strerror(errno)))") }
        defer { unlink(temporary) }
        let problem = write(fd) ?? (fsync(fd) == 0 ? nil : Problem(path: path, reason: "cannot be written: \(String(cString: strerror(errno)))"))
        close(fd)
        if let problem { throw problem }
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { return false }
            throw Problem(path: path, reason: "cannot be created: \(String(cString: strerror(errno)))")
        }
        syncDirectory(of: path)
        return true
    }

    /// Reads the whole file open at `fd` (``WholeFile``), refusing one larger than `limit` bytes.
    static func read(_ fd: Int32, path: String, limit: Int) throws(Problem) -> [UInt8] {
        do throws(WholeFile.Problem) {
            return try WholeFile.read(fd, limit: limit)
        } catch {
            let reason = switch error {
            case .unreadable(let code): "cannot be read: \(String(cString: strerror(code)))"
            case .notARegularFile: "is not a regular file; a key file must be one"
            case .tooLarge(let size): "is not a key file (\(size) bytes)"
            case .changed: "changed while it was read"
            }
            throw Problem(path: path, reason: reason)
        }
    }

    /// What ``create(_:writing:)`` puts between a file's name and its process ID to name the file while it is written.
    private static let temporaryMark = ".tmp-"

    /// Checks the file open at `fd`, and returns its leftover temporary name when it has one besides `path`.
    private static func check(_ fd: Int32, path: String) throws(Problem) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Problem(path: path, reason: "cannot be examined: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Problem(path: path, reason: "is not a regular file; a key file must be one") }
        var leftover = info.st_nlink == 2 ? leftoverName(of: path, info) : nil
        if info.st_nlink == 2, leftover == nil {
            // A creator that was between its link and its unlink as the file was examined has since removed its
            // temporary name: the file is looked at again.
            guard fstat(fd, &info) == 0 else { throw Problem(path: path, reason: "cannot be examined: \(String(cString: strerror(errno)))") }
            leftover = info.st_nlink == 2 ? leftoverName(of: path, info) : nil
        }
        guard info.st_nlink == 1 || (info.st_nlink == 2 && leftover != nil) else { throw hardLink(path, names: info.st_nlink) }
        guard info.st_uid == geteuid() else { throw Problem(path: path, reason: "belongs to another user (uid \(info.st_uid)); a key file must be yours") }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw Problem(path: path, reason: "can be read or written by others (mode \(mode)); a key file must be yours alone: chmod 600 \(path)")
        }
        return leftover
    }

    /// The refusal of the file at `path` that has `names` names.
    private static func hardLink(_ path: String, names: nlink_t) -> Problem {
        Problem(path: path, reason: "has \(names) names (a hard link); a key file must have one")
    }

    /// The name in `path`'s directory, of the form `NAME.tmp-PID`, that names the same file as `path` (`info`):
    /// what ``create(_:writing:)`` leaves when killed between its link and its unlink. `nil` when there is none.
    private static func leftoverName(of path: String, _ info: stat) -> String? {
        let folder = directory(holding: path)
        // Names compare by their bytes, as the file system compares them.
        let prefix = Array((String(path.split(separator: "/").last ?? "") + temporaryMark).utf8)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        for name in names where name.utf8.starts(with: prefix) {
            let pid = name.utf8.dropFirst(prefix.count)
            guard !pid.isEmpty, pid.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { continue }
            var other = stat()
            let candidate = folder + "/" + name
            if lstat(candidate, &other) == 0, other.st_mode & S_IFMT == S_IFREG, other.st_dev == info.st_dev, other.st_ino == info.st_ino {
                return candidate
            }
        }
        return nil
    }

    /// Flushes the directory that holds `path`, so that a file just created or renamed in it survives a crash.
    static func syncDirectory(of path: String) {
        let fd = openFile(directory(holding: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

/// `open(2)`, outside ``OwnerOnlyFile`` whose own `openExisting` would otherwise hide it.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { open(path, flags, mode) }
