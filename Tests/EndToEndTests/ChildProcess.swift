import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program run with `posix_spawn`, its standard streams on given descriptors, in a given directory.
///
/// The tool's runs start here rather than with Foundation's `Process`: on Linux, Swift 6.3's `Process.run()` lists
/// `/proc/self/fd` with a 256-byte copy of each entry's name, which reads past the end of the listing's buffer
/// and crashes the whole test process now and then when it holds some hundreds of descriptors (as this one does,
/// with hundreds of tests' ledgers open at once): swift-corelibs-foundation pull request 5472.
struct ChildProcess {
    let pid: pid_t

    /// Starts `executable` with `arguments` and exactly `environment`, in `directory` (through `/bin/sh`, which
    /// changes to it and then replaces itself with the program), with its standard input, output and error on
    /// the descriptors given. Other descriptors of this process are opened close-on-exec.
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String,
        stdin: Int32, stdout: Int32, stderr: Int32
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, standard) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            posix_spawn_file_actions_adddup2(&actions, descriptor, standard)
        }
        let script = #"cd -- "$1" || exit 127; shift; exec "$@""#
        let argv = (["/bin/sh", "-c", script, "sh", directory, executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp)
        guard result == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "posix_spawn of \(executable): \(String(cString: strerror(result)))"])
        }
        return ChildProcess(pid: pid)
    }

    /// Waits for the program to end: its exit status, or the signal that ended it.
    func wait() -> (status: Int32, signal: Int32?) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return (-1, nil) }
        }
        let signal = status & 0x7F
        return signal == 0 ? ((status >> 8) & 0xFF, nil) : (signal, signal)
    }
}
