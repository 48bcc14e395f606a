#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Forwards SIGINT, SIGTERM and SIGHUP to a child while it runs (those this process does not ignore), and
/// remembers the last one received.
///
/// The handlers are process-wide: forward to one child at a time, from one thread, and ``stop()`` before
/// forwarding to another.
///
/// ```swift
/// SignalForwarding.start(child: pid)
/// let termination = Termination.wait(for: pid)
/// if let signal = SignalForwarding.stop() { /* the user interrupted: die of `signal` too */ }
/// ```
package enum SignalForwarding {
    /// The signals forwarded: the ones a user or the system sends to stop a process.
    package static let forwarded = [SIGINT, SIGTERM, SIGHUP]

    /// Installs handlers that send each forwarded signal on to `child`, keeping the ones this process ignores
    /// ignored (a background job's SIGINT, nohup's SIGHUP).
    ///
    /// The corresponding C functions are `signal` and `kill`.
    package static func start(child: pid_t) {
        forwardingTarget = child
        receivedSignal = 0
        previousHandlers = forwarded.map { number in
            let previous = signal(number) { received in
                if forwardingTarget > 0 { kill(forwardingTarget, received) }
                receivedSignal = received
            }
            if isIgnore(previous) { _ = signal(number, previous) }
            return previous
        }
    }

    /// Restores the dispositions ``start(child:)`` replaced.
    ///
    /// - Returns: The last forwarded signal received since ``start(child:)``, if any.
    package static func stop() -> Int32? {
        for (number, previous) in zip(forwarded, previousHandlers) { _ = signal(number, previous) }
        forwardingTarget = 0
        return receivedSignal == 0 ? nil : receivedSignal
    }

    private static func isIgnore(_ handler: SignalHandler?) -> Bool {
        guard let handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}

// Read by the signal handler: plain words of memory, set before the handler is installed.
nonisolated(unsafe) private var forwardingTarget: pid_t = 0
nonisolated(unsafe) private var receivedSignal: Int32 = 0
nonisolated(unsafe) private var previousHandlers: [SignalHandler?] = []

#if canImport(Glibc)
private typealias SignalHandler = sighandler_t
#else
private typealias SignalHandler = sig_t
#endif
