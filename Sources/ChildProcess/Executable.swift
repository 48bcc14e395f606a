#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program to start: a path, or a bare name that the system looks up in `PATH`.
package struct Executable: Sendable, Equatable {
    /// The file to run, or the name to look up in `PATH` when ``searchesPath`` is true.
    package var path: String
    /// Whether ``path`` is a bare name looked up in `PATH` (`posix_spawnp`) rather than a file (`posix_spawn`).
    package var searchesPath: Bool

    /// A program at `path`, or the one named `path` in `PATH` when `searchesPath` is true.
    package init(path: String, searchesPath: Bool = false) {
        self.path = path
        self.searchesPath = searchesPath
    }

    /// This process's own executable, to start it again: `/proc/self/exe` on Linux, else what the system says
    /// (`_NSGetExecutablePath` on Apple platforms), else `argv[0]` (looked up in `PATH` when it has no slash).
    ///
    /// `/proc/self/exe` names the file this process runs even if its path has since been replaced.
    ///
    /// - Parameter fallbackName: The name to use when this process has no `argv[0]` either.
    package static func own(fallbackName: String) -> Executable {
        #if os(Linux)
        if access("/proc/self/exe", X_OK) == 0 { return Executable(path: "/proc/self/exe") }
        #elseif canImport(Darwin)
        var size: UInt32 = 4096
        var buffer = [CChar](repeating: 0, count: Int(size))
        if _NSGetExecutablePath(&buffer, &size) == 0 { return Executable(path: String(cString: buffer)) }
        #endif
        let first = CommandLine.arguments.first ?? fallbackName
        return Executable(path: first, searchesPath: !first.contains("/"))
    }
}
