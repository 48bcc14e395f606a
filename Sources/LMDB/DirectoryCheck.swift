internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension Environment {
    /// A file of an environment's directory (or the directory itself) that ``Environment`` refuses to open, and why.
    ///
    /// LMDB opens `data.mdb` and `lock.mdb` by name with a plain `open(O_RDWR|O_CREAT)`: it follows a symbolic
    /// link, writes through a hard link to whatever file it names, and blocks on a FIFO. So before LMDB touches a
    /// directory, every open checks, with `lstat`, that each of the two files that exists is a regular file with
    /// one name, owned by the effective user, and that the directory is a directory owned by the effective user and
    /// writable by no one else, so that no other user can put another file in place of a checked one before LMDB
    /// opens it. After LMDB's open, the data file it opened must be the one checked (the same device and inode).
    /// Missing access (a file or directory whose owner lacks a permission LMDB needs) is found here too, and said
    /// file by file.
    public struct FileProblem: Error, Hashable, Sendable, CustomStringConvertible {
        /// What a file is, when it is not a regular file (or, for the directory, not a directory).
        public enum Kind: String, Hashable, Sendable {
            /// A regular file (`S_IFREG`).
            case regularFile = "a regular file"
            /// A directory (`S_IFDIR`).
            case directory = "a directory"
            /// A FIFO (`S_IFIFO`), which an open for reading would wait on for a writer.
            case fifo = "a FIFO (a named pipe)"
            /// A socket (`S_IFSOCK`).
            case socket = "a socket"
            /// A character device (`S_IFCHR`).
            case characterDevice = "a character device"
            /// A block device (`S_IFBLK`).
            case blockDevice = "a block device"
            /// Anything else.
            case other = "a special file"
        }

        /// Access to a file or directory, as `access(2)` tests it.
        public struct Access: OptionSet, Hashable, Sendable, CustomStringConvertible {
            /// The `access(2)` mode bits.
            public let rawValue: Int32
            /// Creates the access of `access(2)` mode bits.
            public init(rawValue: Int32) { self.rawValue = rawValue }

            /// Read access (`R_OK`); for a directory, listing it.
            public static let read = Access(rawValue: R_OK)
            /// Write access (`W_OK`); for a directory, creating and removing files in it.
            public static let write = Access(rawValue: W_OK)
            /// For a directory, search access (`X_OK`): opening the files in it.
            public static let search = Access(rawValue: X_OK)

            /// The access in words, such as "read and write".
            public var description: String {
                let words = [(Access.read, "read"), (.write, "write"), (.search, "search")].filter { contains($0.0) }.map(\.1)
                return words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " and " + words.last!
            }

            /// The permission letters of `chmod` for the access, such as "rw".
            public var modeLetters: String {
                (contains(.read) ? "r" : "") + (contains(.write) ? "w" : "") + (contains(.search) ? "x" : "")
            }
        }

        /// Why the file is refused.
        public enum Reason: Hashable, Sendable {
            /// It is a symbolic link: LMDB would open the file it points to, wherever that is.
            case symbolicLink
            /// It has more than one name: a hard link, perhaps to a file outside the directory.
            case hardLink(names: Int)
            /// It is not a regular file (for the directory: not a directory).
            case wrongKind(Kind)
            /// It belongs to another user than the process's effective user.
            case ownedByAnotherUser(uid: UInt32)
            /// The directory can be written by its group or others (`mode`), who could replace a file in it between
            /// the check and LMDB's open.
            case writableByOthers(mode: UInt32)
            /// The process lacks access the environment needs (it needs `needs` in all).
            case accessDenied(needs: Access)
            /// The data file LMDB opened is not the file that was checked: it was replaced in between.
            case replaced
            /// It could not be examined: `lstat` or `realpath` failed with `errno`.
            case unexamined(errno: Int32)
        }

        /// The file's path (the directory's own for a problem of the directory), as the environment was given it.
        public var path: String
        /// Why it is refused.
        public var reason: Reason
        /// Whether `path` is the environment's directory rather than a file in it.
        public var isDirectory: Bool

        /// Creates a problem of the file at `path`.
        public init(path: String, reason: Reason, isDirectory: Bool) {
            self.path = path
            self.reason = reason
            self.isDirectory = isDirectory
        }

        /// The problem in words, such as `DIR/lock.mdb: is a symbolic link`.
        public var description: String {
            let why = switch reason {
            case .symbolicLink: "is a symbolic link"
            case .hardLink(let names): "has \(names) names (a hard link)"
            case .wrongKind(let kind): "is \(kind.rawValue)"
            case .ownedByAnotherUser(let uid): "is owned by another user (uid \(uid))"
            case .writableByOthers(let mode): "can be written by others (mode \(String(mode, radix: 8)))"
            case .accessDenied(let needs): "needs \(needs) access"
            case .replaced: "was replaced while the environment was being opened"
            case .unexamined(let code): "cannot be examined: \(String(cString: strerror(code)))"
            }
            return "\(path): \(why)"
        }
    }

    /// Why the environment in directory `path` would not be opened (``FileProblem``), or `nil` when its files pass
    /// the checks ``init(path:options:)`` makes before LMDB opens them (a missing directory among them: the open
    /// throws ``LMDBError/noSuchFile`` for that).
    public static func fileProblem(inDirectory path: String, readOnly: Bool) -> FileProblem? {
        do {
            _ = try DirectoryCheck.check(path, readOnly: readOnly)
            return nil
        } catch {
            return error
        }
    }
}

/// The checks of an environment's directory and files before LMDB opens them, and of the data file after
/// (see ``Environment/FileProblem``).
enum DirectoryCheck {
    typealias Problem = Environment.FileProblem

    /// What was checked: the directory's real path (symbolic links in the given path resolved, so that LMDB opens
    /// the checked directory whatever they are changed to), and the identities of the directory and the data file.
    struct Checked {
        var directory: String
        var directoryIdentity: OpenEnvironments.Identity
        /// `nil` when there was no data file yet (LMDB creates it).
        var dataFile: OpenEnvironments.Identity?
    }

    static let dataFile = "data.mdb"
    static let lockFile = "lock.mdb"

    /// Checks the directory `path` and the files in it that the environment opens; returns what was checked, or
    /// `nil` when the directory does not exist (LMDB then says so).
    static func check(_ path: String, readOnly: Bool) throws(Problem) -> Checked? {
        let euid = geteuid()
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw Problem(path: path, reason: .unexamined(errno: errno), isDirectory: true)
        }
        guard let resolved = realpath(path, nil) else {
            throw Problem(path: path, reason: .unexamined(errno: errno), isDirectory: true)
        }
        let directory = String(cString: resolved)
        free(resolved)
        // Checked again through the resolved path: the given one may have been changed since.
        guard lstat(directory, &info) == 0 else {
            throw Problem(path: path, reason: .unexamined(errno: errno), isDirectory: true)
        }
        guard kind(of: info) == .directory else {
            throw Problem(path: path, reason: .wrongKind(kind(of: info)), isDirectory: true)
        }
        guard info.st_uid == euid else {
            throw Problem(path: path, reason: .ownedByAnotherUser(uid: UInt32(info.st_uid)), isDirectory: true)
        }
        guard info.st_mode & 0o022 == 0 else {
            throw Problem(path: path, reason: .writableByOthers(mode: UInt32(info.st_mode & 0o7777)), isDirectory: true)
        }
        let directoryIdentity = OpenEnvironments.Identity(info)
        try requireAccess(.search, to: directory, shownAs: path, isDirectory: true)

        var dataFile: OpenEnvironments.Identity?
        var creates = false
        let files: [(name: String, needs: Problem.Access)] = [
            (Self.dataFile, readOnly ? .read : [.read, .write]), (lockFile, [.read, .write]),
        ]
        for (name, needs) in files {
            let file = directory + "/" + name
            let shown = path + "/" + name
            guard lstat(file, &info) == 0 else {
                guard errno == ENOENT else { throw Problem(path: shown, reason: .unexamined(errno: errno), isDirectory: false) }
                // A read-only open without a data file fails in LMDB; a missing lock file is created even then.
                creates = creates || name == lockFile || !readOnly
                continue
            }
            try checkFile(info, shownAs: shown)
            try requireAccess(needs, to: file, shownAs: shown, isDirectory: false)
            if name == Self.dataFile { dataFile = OpenEnvironments.Identity(info) }
        }
        if creates {
            try requireAccess([.write, .search], to: directory, shownAs: path, isDirectory: true)
        }
        return Checked(directory: directory, directoryIdentity: directoryIdentity, dataFile: dataFile)
    }

    /// Checks, once LMDB has opened the environment `env`, that its directory and data file are the ones checked,
    /// and that the files have not become something else meanwhile.
    static func confirm(_ checked: Checked, opened env: OpaquePointer, shownAs path: String) throws(Problem) {
        var descriptor: mdb_filehandle_t = -1
        guard mdb_env_get_fd(env, &descriptor) == MDB_SUCCESS else {
            throw Problem(path: path + "/" + Self.dataFile, reason: .replaced, isDirectory: false)
        }
        try confirm(checked, dataFileDescriptor: descriptor, shownAs: path)
    }

    /// ``confirm(_:opened:shownAs:)`` with the descriptor of the data file LMDB opened.
    static func confirm(_ checked: Checked, dataFileDescriptor descriptor: Int32, shownAs path: String) throws(Problem) {
        var opened = stat()
        var named = stat()
        let dataFile = checked.directory + "/" + Self.dataFile
        guard fstat(descriptor, &opened) == 0, lstat(dataFile, &named) == 0 else {
            throw Problem(path: path + "/" + Self.dataFile, reason: .replaced, isDirectory: false)
        }
        try checkFile(opened, shownAs: path + "/" + Self.dataFile)
        let identity = OpenEnvironments.Identity(opened)
        guard identity == OpenEnvironments.Identity(named), checked.dataFile.map({ $0 == identity }) ?? true else {
            throw Problem(path: path + "/" + Self.dataFile, reason: .replaced, isDirectory: false)
        }
        var directory = stat()
        guard lstat(checked.directory, &directory) == 0, OpenEnvironments.Identity(directory) == checked.directoryIdentity else {
            throw Problem(path: path, reason: .replaced, isDirectory: true)
        }
        // LMDB does not tell which lock file it opened; what the name leads to now must still pass.
        var lock = stat()
        if lstat(checked.directory + "/" + lockFile, &lock) == 0 { try checkFile(lock, shownAs: path + "/" + lockFile) }
    }

    /// Requires a file (of the directory) to be a regular file with one name, owned by the effective user.
    private static func checkFile(_ info: stat, shownAs path: String) throws(Problem) {
        let kind = kind(of: info)
        if info.st_mode & S_IFMT == S_IFLNK { throw Problem(path: path, reason: .symbolicLink, isDirectory: false) }
        guard kind == .regularFile else { throw Problem(path: path, reason: .wrongKind(kind), isDirectory: false) }
        guard info.st_nlink == 1 else {
            throw Problem(path: path, reason: .hardLink(names: Int(info.st_nlink)), isDirectory: false)
        }
        guard info.st_uid == geteuid() else {
            throw Problem(path: path, reason: .ownedByAnotherUser(uid: UInt32(info.st_uid)), isDirectory: false)
        }
    }

    /// Requires the effective user to have `needs` to `file`. A read-only file system is no lack of access: LMDB
    /// opens a read-only environment there without writing.
    private static func requireAccess(
        _ needs: Problem.Access, to file: String, shownAs path: String, isDirectory: Bool
    ) throws(Problem) {
        guard faccessat(AT_FDCWD, file, needs.rawValue, AT_EACCESS) != 0, errno == EACCES else { return }
        throw Problem(path: path, reason: .accessDenied(needs: needs), isDirectory: isDirectory)
    }

    private static func kind(of info: stat) -> Problem.Kind {
        switch info.st_mode & S_IFMT {
        case S_IFREG: .regularFile
        case S_IFDIR: .directory
        case S_IFIFO: .fifo
        case S_IFSOCK: .socket
        case S_IFCHR: .characterDevice
        case S_IFBLK: .blockDevice
        default: .other
        }
    }
}

extension OpenEnvironments.Identity {
    init(_ info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
