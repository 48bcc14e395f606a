import Foundation
import PermissionLedger
import PermissionModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension LedgerOption {
    /// Refuses (wrong usage, exit 2) `path`, where a command that reads this ledger would write a file or a
    /// directory, when it lies inside the ledger's directory or is the ledger's key file: a reading command never
    /// writes to the ledger, and a report renamed over `data.mdb`, the key store or the key file would lose the
    /// ledger, or every personal field in it, for good.
    ///
    /// The directory that would hold `path` is compared with symbolic links resolved; `path`'s own last component
    /// is not followed, since what is written there replaces a link rather than writing through it.
    func refuseOutputInsideLedger(_ path: String, option: String) throws {
        let target = Self.resolvedForWriting(path)
        let ledgerDirectory = Self.resolvedForWriting(self.path, followingLast: true)
        if target == ledgerDirectory || target.hasPrefix(ledgerDirectory.hasSuffix("/") ? ledgerDirectory : ledgerDirectory + "/") {
            throw ToolFailure(.usage, "usage: \(option) \(quoted(path)) is inside the ledger's directory; write it elsewhere")
        }
        let keyFile = LedgerKey.Location.of(ledgerPath: self.path, given: keyFile).path
        if target == Self.resolvedForWriting(keyFile) {
            throw ToolFailure(.usage, "usage: \(option) \(quoted(path)) is the ledger's key file; write it elsewhere")
        }
    }

    /// `path` made absolute, with the symbolic links of the directories leading to it resolved as far as they
    /// exist, and its last component resolved too with `followingLast` (or when it is `.` or `..`).
    static func resolvedForWriting(_ path: String, followingLast: Bool = false) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let components = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let last = components.last else { return "/" }
        if followingLast || last == "." || last == ".." {
            if let real = realPath(absolute) { return real }
        }
        // The deepest existing directory above the path, resolved, then the rest as given.
        var existing = components.dropLast()
        var rest = [last]
        while true {
            let directory = "/" + existing.joined(separator: "/")
            if let real = realPath(directory) {
                return (real == "/" ? "" : real) + "/" + rest.joined(separator: "/")
            }
            guard let up = existing.popLast() else { return "/" + rest.joined(separator: "/") }
            rest.insert(up, at: 0)
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
