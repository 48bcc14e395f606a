import Foundation
internal import LMDB

/// What a ledger's directory must hold before LMDB opens it, and the making of a new one.
///
/// A ledger may be handed over by someone else, so before LMDB opens anything the directory and its files are
/// checked (``/LMDB/Environment/FileProblem``): a symbolic link, a hard link, a FIFO or another special file,
/// another user's file or directory, or a directory that others can write to is refused with one line naming the
/// file and the reason, and missing access is said file by file with what to grant. A new ledger is made only in
/// an absent or empty directory: one that holds part of a ledger (a `lock.mdb` alone, an empty `data.mdb`) has
/// lost its data, and is never started anew over it. See docs/RELIABILITY.md, "A ledger directory handed to you".
enum LedgerDirectory {
    /// Prepares the directory at `path` for ``Ledger/init(path:options:)`` and ``Ledger/verify(path:progress:)``:
    /// refuses a path that holds something other than a sound ledger, or files the ledger must not open, and
    /// creates a missing directory (mode 0700) for a writable open that `makes` a new ledger where there is none.
    /// Returns what a writable open does next (``LedgerCreation/Start``): open the ledger, make it (or finish
    /// making it), or wait for another process that is making it.
    @discardableResult
    static func prepare(path: String, readOnly: Bool, makes: Bool = false) throws(LedgerError) -> LedgerCreation.Start {
        var info = stat()
        // stat, not lstat: a symbolic link given as the path names the directory it leads to, which is checked.
        if stat(path, &info) != 0 {
            let code = errno
            if code == ENOENT, let target = danglingLinkTarget(path) {
                throw LedgerError(.notALedger, "\(path): is a symbolic link to \(target), which does not exist; give the ledger's directory, or create the one the link names")
            }
            guard code == ENOENT else {
                throw LedgerError(.storage, "\(path): cannot be examined: \(String(cString: strerror(code)))")
            }
            if !makes { throw LedgerError(.missing, "\(path): no ledger here (the directory does not exist)") }
            if mkdir(path, 0o700) == 0 {
                chmod(path, 0o700)
            } else {
                guard errno == EEXIST else {
                    throw LedgerError(.storage, "\(path): cannot create the ledger directory: \(String(cString: strerror(errno)))")
                }
                // Made by another process meanwhile, or a symbolic link made since the stat that leads nowhere
                // (mkdir does not follow it).
                guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                    throw LedgerError(.notALedger, "\(path): not a ledger (it is a symbolic link that leads nowhere; a ledger is a directory)")
                }
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw LedgerError(.notALedger, "\(path): not a ledger (it is a file; a ledger is a directory)")
        }
        if let problem = Environment.fileProblem(inDirectory: path, readOnly: readOnly) {
            throw refusal(problem, readOnly: readOnly)
        }
        let dataFile = path + "/data.mdb"
        let hasData = lstat(dataFile, &info) == 0
        if !hasData || info.st_size == 0 || LedgerCreation.isMarked(path) {
            if !readOnly {
                return try LedgerCreation.begin(path: path, makes: makes)
            }
            if LedgerCreation.isMarked(path), !hasData || info.st_size == 0 {
                throw LedgerCreation.notMadeYet(path, readOnly: true)
            }
        }
        // A ledger's data file, or a reader's look at a directory without one (a writer's is
        // ``LedgerCreation/begin(path:makes:)``'s).
        guard hasData else { throw LedgerError(.notALedger, "\(path): not a ledger (no data.mdb in the directory)") }
        if info.st_size == 0 { throw emptyDataFile(dataFile) }
        return .open
    }

    /// The names in the directory at `path` that holds no `data.mdb`, read to see that it is empty before a new
    /// ledger is made in it.
    static func listing(_ path: String) throws(LedgerError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            guard faccessat(AT_FDCWD, path, R_OK, AT_EACCESS) != 0, errno == EACCES else {
                throw LedgerError(.storage, "\(path): cannot list the directory: \(error.localizedDescription)")
            }
            throw LedgerError(.storage, "\(path): needs read access, to see that it is empty before a new ledger is made in it; grant it with chmod u+r \(path)")
        }
    }

    /// The refusal of a directory that holds a `lock.mdb` and no `data.mdb`, with no mark of a ledger being made.
    static func lockFileAlone(_ path: String) -> LedgerError {
        LedgerError(.notALedger, "\(path): holds a lock.mdb but no data.mdb; the ledger's data is lost or was moved; restore data.mdb from a backup (a new ledger is never started over a lost one)")
    }

    /// The refusal of an empty `data.mdb` with no mark of a ledger being made.
    static func emptyDataFile(_ dataFile: String) -> LedgerError {
        LedgerError(.notALedger, "\(dataFile): is empty; the ledger's data is lost or was never written; restore it from a backup (a new ledger is never started over a lost one)")
    }

    /// Where the symbolic link at `path` leads, when `path` is one.
    private static func danglingLinkTarget(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &target, target.count - 1)
        return count > 0 ? String(decoding: target[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "a missing path"
    }

    /// The ledger's refusal of what ``/LMDB/Environment/fileProblem(inDirectory:readOnly:)`` found, in one line
    /// that names the file, the reason and what to do.
    static func refusal(_ problem: Environment.FileProblem, readOnly: Bool) -> LedgerError {
        let path = problem.path
        let filesRule = "a ledger's files must be regular files owned by you; refusing to open it"
        let directoryRule = "a ledger's directory must be yours and writable by you alone, so that no one else can replace its files; refusing to open it"
        switch problem.reason {
        case .symbolicLink:
            return LedgerError(.notALedger, "\(path): is a symbolic link; \(filesRule)")
        case .hardLink(let names):
            return LedgerError(.notALedger, "\(path): is a hard link (one of \(names) names of one file, which may be outside the directory); \(filesRule)")
        case .wrongKind(let kind):
            return LedgerError(.notALedger, "\(path): is \(kind.rawValue); \(problem.isDirectory ? "a ledger is a directory" : filesRule)")
        case .ownedByAnotherUser(let uid):
            return LedgerError(.notALedger, "\(path): is owned by another user (uid \(uid)); \(problem.isDirectory ? directoryRule : filesRule)")
        case .writableByOthers(let mode):
            let who = mode & 0o020 != 0 ? (mode & 0o002 != 0 ? "its group and others" : "its group") : "others"
            return LedgerError(.notALedger, "\(path): can be written by \(who) (mode \(String(mode & 0o777, radix: 8))), who could replace the ledger's files; refusing to open it; run chmod go-w \(path)")
        case .replaced:
            return LedgerError(.notALedger, "\(path): was replaced while the ledger was being opened; refusing to use it")
        case .unexamined(let code):
            return LedgerError(.storage, "\(path): cannot be examined: \(String(cString: strerror(code)))")
        case .accessDenied(let needs):
            let why: String
            if problem.isDirectory {
                why = needs.contains(.write)
                    ? "to create the ledger's files (readers too create lock.mdb, LMDB's reader table, when it is missing)"
                    : "to open the ledger's files"
            } else if path.hasSuffix("/lock.mdb") {
                why = "(it is LMDB's reader table, which readers write too)"
            } else {
                why = readOnly ? "to read the ledger" : "(appends write to it)"
            }
            return LedgerError(.storage, "\(path): needs \(needs) access \(why); grant it with chmod u+\(needs.modeLetters) \(path)")
        }
    }
}
