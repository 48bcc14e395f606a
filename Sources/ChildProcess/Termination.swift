#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a child process ended: its exit status, or the signal that killed it.
package enum Termination: Equatable, Sendable, CustomStringConvertible {
    /// The child exited with this status (0 to 255).
    case exited(Int32)
    /// The child was killed by this signal.
    case killed(signal: Int32)

    /// Decodes a status that `waitpid` stored: its low seven bits are the signal that killed the child (zero
    /// when it exited), the byte above them the exit status.
    package init(waitStatus status: Int32) {
        let signal = status & 0x7F
        self = signal == 0 ? .exited((status >> 8) & 0xFF) : .killed(signal: signal)
    }

    /// Waits until the child `pid` has ended and reaps it, retrying a wait that a signal interrupts.
    ///
    /// The corresponding C function is `waitpid`. If it fails for another reason (`pid` is not a child
    /// of this process), the status read is zero: `.exited(0)`.
    package static func wait(for pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return Termination(waitStatus: status)
    }

    /// "exit status 1", "killed by signal 9".
    package var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .killed(let signal): "killed by signal \(signal)"
        }
    }
}
