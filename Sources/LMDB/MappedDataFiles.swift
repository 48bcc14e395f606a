#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Where the data files of the environments open in this process are mapped, for a handler of `SIGBUS` and
/// `SIGSEGV` that would tell a fault caused by a damaged data file from any other.
///
/// LMDB reads through its memory map. It bounds page numbers by the last page in use, but takes node
/// offsets (16 bits) and key and value sizes (16 and 32 bits) from the pages: every address it reads, or
/// hands on in a key or value that its caller reads, lies in the map or less than 4 GiB and 128 KiB past
/// its end. A data file shorter than its pages in use (cut short) faults inside the map (`SIGBUS`); damaged
/// offsets and sizes fault past it. A fault anywhere else is not the data file's doing.
///
/// ``dataFile(reaching:)`` is async-signal-safe: it reads a fixed table and takes no lock. The table holds
/// up to 16 environments at a time (a path is kept up to 1,023 bytes). The maps are found in
/// `/proc/self/maps`, so the table stays empty anywhere but Linux.
public enum MappedDataFiles {
    /// How far past its map's end a pointer LMDB derives from a page can reach.
    static let reach: UInt = (1 << 32) + (128 << 10)
    private static let capacity = 16
    private static let pathCapacity = 1024

    private struct Slot {
        /// The map's first address; 0 for a free slot.
        var start: UInt
        /// The end of the map's reach (see ``reach``).
        var end: UInt
        /// The environment that holds the slot.
        var owner: UInt
    }

    private nonisolated(unsafe) static let slots: UnsafeMutablePointer<Slot> = {
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot(start: 0, end: 0, owner: 0), count: capacity)
        return slots
    }()
    private nonisolated(unsafe) static let paths: UnsafeMutablePointer<CChar> = {
        let paths = UnsafeMutablePointer<CChar>.allocate(capacity: capacity * pathCapacity)
        paths.initialize(repeating: 0, count: capacity * pathCapacity)
        return paths
    }()
    private nonisolated(unsafe) static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// Records (or moves) the map of `owner`'s data file `dataFile`: `size` bytes at `start`.
    static func record(owner: AnyObject, dataFile: String, start: UnsafeMutableRawPointer, size: Int) {
        let id = UInt(bitPattern: ObjectIdentifier(owner))
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        let index = (0..<capacity).first { slots[$0].owner == id } ?? (0..<capacity).first { slots[$0].owner == 0 }
        guard let index else { return }
        // Readers of the table run in signal handlers: the slot is empty while it changes.
        slots[index].end = 0
        slots[index].start = 0
        let path = paths + index * pathCapacity
        let bytes = Array(dataFile.utf8.prefix(pathCapacity - 1))
        for (offset, byte) in bytes.enumerated() { path[offset] = CChar(bitPattern: byte) }
        path[bytes.count] = 0
        slots[index].owner = id
        let first = UInt(bitPattern: start)
        let (last, overflow) = first.addingReportingOverflow(UInt(size) &+ reach)
        slots[index].start = first
        slots[index].end = overflow ? .max : last
    }

    /// Where the file open as `descriptor` is mapped in this process, from `/proc/self/maps`: the largest
    /// mapping of it; `nil` when it is not mapped or where that is not known (anywhere but Linux).
    static func mapping(of descriptor: Int32) -> (start: UnsafeMutableRawPointer, size: Int)? {
        FileMappings.regions(of: descriptor).max { $0.size < $1.size }.map { ($0.start, $0.size) }
    }

    /// Forgets `owner`'s map (its environment is closing).
    static func forget(owner: AnyObject) {
        let id = UInt(bitPattern: ObjectIdentifier(owner))
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        for index in 0..<capacity where slots[index].owner == id {
            slots[index].end = 0
            slots[index].start = 0
            slots[index].owner = 0
        }
    }

    /// Sets the table up, so that ``dataFile(reaching:)`` allocates nothing: call it before installing a
    /// handler that calls ``dataFile(reaching:)``.
    public static func prepare() {
        _ = slots
        _ = paths
    }

    /// The path of the data file (`DIR/data.mdb`) whose map `address` lies in or within reach of, as a
    /// C string that stays valid while its environment is open; `nil` when there is none.
    /// Async-signal-safe: for a `SIGBUS` or `SIGSEGV` handler, with the fault's address (`si_addr`).
    public static func dataFile(reaching address: UnsafeRawPointer?) -> UnsafePointer<CChar>? {
        guard let address else { return nil }
        let value = UInt(bitPattern: address)
        for index in 0..<capacity {
            let slot = slots[index]
            if slot.start != 0, value >= slot.start, value < slot.end { return UnsafePointer(paths + index * pathCapacity) }
        }
        return nil
    }
}
