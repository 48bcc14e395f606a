#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one of a child's descriptors is when the child starts, set up between `fork` and `exec`.
package enum FileAction: Sendable, Equatable {
    /// The child's descriptor `target` is a copy of this process's descriptor `source`.
    ///
    /// The corresponding C function is `posix_spawn_file_actions_adddup2`.
    case duplicate(_ source: Int32, as: Int32)
    /// The child's descriptor `target` is the file at `path`, opened with `flags` (and `mode`, if it is created).
    ///
    /// The corresponding C function is `posix_spawn_file_actions_addopen`.
    case open(_ path: String, flags: Int32, mode: mode_t, as: Int32)
}

/// A child process to start: its program, arguments, environment, descriptors and signal state.
///
/// ```swift
/// let pid = try SpawnRequest(
///     executable: .own(fallbackName: "tool"),
///     arguments: ["tool", "child"],
///     fileActions: [.open("/tmp/child.log", flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644, as: 1)]
/// ).spawn()
/// let termination = Termination.wait(for: pid)
/// ```
package struct SpawnRequest: Sendable {
    /// The program the child runs.
    package var executable: Executable
    /// The child's `argv`, `argv[0]` included.
    package var arguments: [String]
    /// The child's environment; `nil` passes on this process's environment as it is.
    package var environment: [String: String]?
    /// The child's descriptors, applied in order; descriptors marked close-on-exec are closed after them.
    package var fileActions: [FileAction]
    /// Signals whose disposition is the default in the child, whatever this process does with them
    /// (`POSIX_SPAWN_SETSIGDEF`); the others keep what this process set, apart from handlers, which `exec`
    /// resets to the default.
    package var signalDefaults: [Int32]
    /// The signals blocked in the child (`POSIX_SPAWN_SETSIGMASK`); `nil` keeps this thread's mask.
    package var signalMask: [Int32]?

    /// A request to start `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: The program the child runs.
    ///   - arguments: The child's `argv`, `argv[0]` included.
    ///   - environment: The child's environment; `nil` passes on this process's.
    ///   - fileActions: The child's descriptors, applied in order.
    ///   - signalDefaults: Signals reset to their default disposition in the child.
    ///   - signalMask: The signals blocked in the child; `nil` keeps this thread's mask.
    package init(
        executable: Executable, arguments: [String], environment: [String: String]? = nil,
        fileActions: [FileAction] = [], signalDefaults: [Int32] = [], signalMask: [Int32]? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.fileActions = fileActions
        self.signalDefaults = signalDefaults
        self.signalMask = signalMask
    }

    /// Starts the child.
    ///
    /// The corresponding C functions are `posix_spawn` and `posix_spawnp`.
    ///
    /// - Returns: The child's process id; wait for it with ``Termination/wait(for:)``.
    /// - Throws: ``SpawnError`` when the child could not be started.
    package func spawn() throws(SpawnError) -> pid_t {
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for action in fileActions {
            switch action {
            case .duplicate(let source, let target):
                posix_spawn_file_actions_adddup2(&actions, source, target)
            case .open(let path, let flags, let mode, let target):
                posix_spawn_file_actions_addopen(&actions, target, path, flags, mode)
            }
        }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags: Int32 = 0
        if !signalDefaults.isEmpty {
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in signalDefaults { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            flags |= Int32(POSIX_SPAWN_SETSIGDEF)
        }
        if let signalMask {
            var mask = sigset_t()
            sigemptyset(&mask)
            for signal in signalMask { sigaddset(&mask, signal) }
            posix_spawnattr_setsigmask(&attributes, &mask)
            flags |= Int32(POSIX_SPAWN_SETSIGMASK)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in argv + (envp ?? []) { free(pointer) } }

        var pid: pid_t = 0
        func start(_ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
            executable.searchesPath
                ? posix_spawnp(&pid, executable.path, &actions, &attributes, argv, environment)
                : posix_spawn(&pid, executable.path, &actions, &attributes, argv, environment)
        }
        let status: Int32
        if let envp {
            status = envp.withUnsafeBufferPointer { start($0.baseAddress) }
        } else {
            #if canImport(Darwin)
            status = start(_NSGetEnviron().pointee)
            #else
            status = start(environ)
            #endif
        }
        guard status == 0 else { throw SpawnError(executable: executable, code: status) }
        return pid
    }
}

/// A child process that could not be started.
package struct SpawnError: Error, CustomStringConvertible {
    /// The program that was to run.
    package let executable: Executable
    /// The `errno` value `posix_spawn` returned.
    package let code: Int32

    /// "could not start", the program's path, and the system's words for ``code``.
    package var description: String {
        "could not start \(executable.path): \(String(cString: strerror(code)))"
    }
}
