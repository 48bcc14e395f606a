internal import LMDB

/// Damage that LMDB meets where it cannot return an error, for a program that would rather report it than
/// die of it (`permission-ledger` does).
///
/// The opening checks (`Ledger.init`) rule out the faults a file cut short causes, and a writer that asks
/// for it (``Ledger/Options/checksPages``) walks every page first; a reader of a damaged page can still make
/// LMDB fail one of its assertions, or read outside the data file and fault (`SIGBUS`, `SIGSEGV`). Neither
/// can be turned into a thrown error: LMDB aborts after an assertion, and a fault stops the thread where
/// it is. What a process can do is say what happened and exit.
public enum StorageFaults {
    /// Sets what runs when LMDB fails one of its assertions in this process: `handler` gets the data file
    /// (`DIR/data.mdb`) and LMDB's text of the assertion, and LMDB calls `abort()` when it returns, so a
    /// handler that wants another ending ends the process itself (`_exit`). `nil` restores LMDB's behaviour.
    ///
    /// The corresponding LMDB function is `mdb_env_set_assert`.
    public static func setAssertionHandler(_ handler: (@Sendable (_ dataFile: String, _ assertion: String) -> Void)?) {
        AssertionFailures.setHandler(handler)
    }

    /// Sets up what ``dataFile(reaching:)`` reads, so that it allocates nothing: call it before installing a
    /// signal handler that calls it.
    public static func prepare() {
        MappedDataFiles.prepare()
    }

    /// The data file (`DIR/data.mdb`, a C string) of an open ledger whose memory map `address` lies in or
    /// within the reach of LMDB's pointers past it: a fault there is the data file's doing (it is shorter
    /// than its pages say, or a damaged page sent LMDB outside it); `nil` for a fault anywhere else, which is
    /// not. Async-signal-safe: for a `SIGBUS` or `SIGSEGV` handler, with the fault's address (`si_addr`).
    public static func dataFile(reaching address: UnsafeRawPointer?) -> UnsafePointer<CChar>? {
        MappedDataFiles.dataFile(reaching: address)
    }
}
