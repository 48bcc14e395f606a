import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The directories that output holding children's data is written into (audit bundles, a directory of reports):
/// made for the effective user alone (mode 0700), or already there and empty, so that what is written never mixes
/// with files that were there before.
package enum OwnerOnlyDirectory {
    /// Why the directory cannot be used.
    package enum Problem: Error {
        /// It exists and holds files.
        case notEmpty
        /// It cannot be made, for the reason given (the system's words).
        case cannotBeMade(String)
    }

    /// Makes the directory at `path` (mode 0700), or checks that the one there is empty.
    package static func makeNewOrEmpty(_ path: String) throws(Problem) {
        guard mkdir(path, 0o700) != 0 else { return }
        let reason = String(cString: strerror(errno))
        guard errno == EEXIST, let existing = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw .cannotBeMade(reason)
        }
        guard existing.isEmpty else { throw .notEmpty }
    }
}
