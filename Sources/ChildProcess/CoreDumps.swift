#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops this process from writing a core file if it dies of a fault: for a child whose crash is an
/// expected answer, not a bug to debug.
///
/// The corresponding C function is `setrlimit` with `RLIMIT_CORE`; the soft limit becomes 0. A failure
/// leaves the limit as it was.
package func disableCoreDumps() {
    var limit = rlimit()
    #if os(Linux)
    let resource = __rlimit_resource_t(RLIMIT_CORE.rawValue)
    #else
    let resource = RLIMIT_CORE
    #endif
    guard getrlimit(resource, &limit) == 0 else { return }
    limit.rlim_cur = 0
    _ = setrlimit(resource, &limit)
}
