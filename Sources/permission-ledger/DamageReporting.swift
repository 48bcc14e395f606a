import Foundation
import PermissionLedger

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Damage met where no error can be returned is still one line and exit 3 (docs/spec/CLI.md: a command never
/// dies of a signal or an assertion on a damaged file).
///
/// - LMDB's assertions: LMDB calls the handler set here before it aborts; the handler writes the line and
///   exits 3 first.
/// - `SIGBUS` and `SIGSEGV`: a handler writes the line and exits 3 when the fault's address lies in a ledger's
///   memory map or within the reach of LMDB's pointers past it (``StorageFaults/dataFile(reaching:)``). A fault
///   elsewhere is a bug, not damage: the handler puts the previous action back (the Swift runtime's crash
///   report, or the default) and returns, so the fault happens again and the process dies of it; a signal another
///   process sent is raised again under that action. Swift's traps (`SIGILL`, `SIGTRAP`) are never caught.
///
/// The line names the data file, not the `seq`: the fault stops the read wherever it is.
enum DamageReporting {
    /// Installs both handlers, for the rest of the process.
    static func start() {
        StorageFaults.setAssertionHandler { dataFile, assertion in
            let line = "\(dataFile): the data file is damaged: LMDB met a page it cannot read (\(assertion)); \(remedy)\n"
            _ = Array(line.utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            _exit(ToolExit.unreadable.rawValue)
        }
        StorageFaults.prepare()
        for signal in [SIGBUS, SIGSEGV] {
            var action = sigaction()
            #if canImport(Darwin)
            action.__sigaction_u.__sa_sigaction = handleFault
            #else
            action.__sigaction_handler.sa_sigaction = handleFault
            #endif
            action.sa_flags = SA_SIGINFO | SA_ONSTACK
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, previousActions + Int(signal == SIGBUS ? 0 : 1))
        }
    }

    /// Puts LMDB's own behaviour and the previous actions back: for `verify`'s checking process, whose death
    /// by a signal its parent reports.
    static func stop() {
        StorageFaults.setAssertionHandler(nil)
        sigaction(SIGBUS, previousActions, nil)
        sigaction(SIGSEGV, previousActions + 1, nil)
    }

    fileprivate static let remedy = "run permission-ledger verify, or restore the ledger from a backup"

    /// The actions of SIGBUS and SIGSEGV before ``start()``.
    fileprivate nonisolated(unsafe) static let previousActions: UnsafeMutablePointer<sigaction> = {
        let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 2)
        actions.initialize(repeating: sigaction(), count: 2)
        return actions
    }()
}

/// The fault handler: only async-signal-safe calls (`write`, `strlen`, `sigaction`, `raise`, `_exit`) and static text.
private func handleFault(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _: UnsafeMutableRawPointer?) {
    #if canImport(Darwin)
    let address = info?.pointee.si_addr
    #else
    let address = info?.pointee._sifields._sigfault.si_addr
    #endif
    // A signal another process sent (`kill`) carries no fault address, and returning would not bring it again:
    // it is raised again under the previous action, as if never caught.
    #if canImport(Darwin)
    let sent = info.map { $0.pointee.si_code == SI_USER || $0.pointee.si_code == SI_QUEUE } ?? true
    #else
    // Linux: a fault's code is positive; `kill`'s (SI_USER), `sigqueue`'s and `tgkill`'s are not.
    let sent = (info?.pointee.si_code ?? 0) <= 0
    #endif
    guard !sent, let dataFile = StorageFaults.dataFile(reaching: address) else {
        sigaction(signal, DamageReporting.previousActions + Int(signal == SIGBUS ? 0 : 1), nil)
        if sent { raise(signal) }
        return
    }
    func put(_ text: StaticString) { _ = write(STDERR_FILENO, text.utf8Start, text.utf8CodeUnitCount) }
    _ = write(STDERR_FILENO, dataFile, strlen(dataFile))
    put(": the data file is damaged: reading it faulted (")
    put(signal == SIGBUS ? "SIGBUS" : "SIGSEGV")
    put("), as a page sent LMDB outside the file; run permission-ledger verify, or restore the ledger from a backup\n")
    _exit(ToolExit.unreadable.rawValue)
}
