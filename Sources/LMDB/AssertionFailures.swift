internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// What LMDB does when one of its own assertions fails.
///
/// LMDB checks some of what it reads from its pages with assertions (built in unless LMDB was compiled with
/// `NDEBUG`): a damaged data file can fail one, a page that should be a leaf and is not, say. LMDB then
/// writes the assertion to standard error and calls `abort()`; the process dies of `SIGABRT`, whatever it
/// was doing. No error can be returned from there. A program that would rather say something first sets a
/// handler here: LMDB calls it with the data file's path and its text of the assertion, and aborts when
/// it returns, so a handler that has more to do ends the process itself (with `_exit`).
///
/// The corresponding LMDB function is `mdb_env_set_assert`, set on every environment this module opens.
public enum AssertionFailures {
    /// A handler: the data file of the environment (`DIR/data.mdb`) and LMDB's text, such as
    /// `mdb.c:5822: Assertion 'IS_LEAF(mp)' failed in mdb_cursor_next()`.
    public typealias Handler = @Sendable (_ dataFile: String, _ assertion: String) -> Void

    private nonisolated(unsafe) static var handler: Handler?
    private nonisolated(unsafe) static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// Sets the handler for every environment of this process (`nil`: LMDB's own behaviour, abort at once).
    public static func setHandler(_ handler: Handler?) {
        pthread_mutex_lock(lock)
        self.handler = handler
        pthread_mutex_unlock(lock)
    }

    /// The callback LMDB calls; it has no context of its own, so it reads the handler set for the process.
    static let callback: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Void = { env, message in
        pthread_mutex_lock(AssertionFailures.lock)
        let handler = AssertionFailures.handler
        pthread_mutex_unlock(AssertionFailures.lock)
        guard let handler else { return }
        var directory: UnsafePointer<CChar>?
        let path = env.flatMap { mdb_env_get_path($0, &directory) == MDB_SUCCESS ? directory : nil }.map { String(cString: $0) }
        handler(path.map { $0 + "/data.mdb" } ?? "data.mdb", message.map { String(cString: $0) } ?? "an assertion failed")
    }
}
