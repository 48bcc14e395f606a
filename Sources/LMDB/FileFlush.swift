#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Flushes a file to disk, retrying when a signal interrupts: its data and what reading it back needs
/// (`fdatasync`) or all of its metadata too (`fsync`); on Apple's systems `F_FULLFSYNC` either way, as LMDB
/// does, since their `fsync` does not reach the disk's own cache.
func flushFile(_ descriptor: Int32, dataOnly: Bool) throws(LMDBError) {
    var status: Int32
    #if canImport(Darwin)
    repeat { status = fcntl(descriptor, F_FULLFSYNC) } while status < 0 && errno == EINTR
    #else
    repeat { status = dataOnly ? fdatasync(descriptor) : fsync(descriptor) } while status < 0 && errno == EINTR
    #endif
    guard status == 0 else { throw LMDBError(rawValue: errno) }
}

/// Closes a file descriptor: the system's `close(2)`, under a name that the `close()` methods of
/// ``Environment``, ``DataFileSync`` and the ledger do not hide.
@discardableResult
package func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// Opens a file: the system's `open(2)`, under a name that `Ledger.open(path:options:progress:)` does not hide.
package func openDescriptor(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
