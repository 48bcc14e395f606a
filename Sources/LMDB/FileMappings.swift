#if canImport(Glibc)
internal import Glibc
#endif

/// Where a file is mapped in this process's address space, read from `/proc/self/maps` (LMDB does not tell
/// where it mapped its data file).
enum FileMappings {
    /// One mapping of the file.
    struct Region {
        var start: UnsafeMutableRawPointer
        var size: Int
        var writable: Bool
    }

    /// Every mapping of the file open as `descriptor`; empty when it is not mapped or where that is not
    /// known (anywhere but Linux).
    static func regions(of descriptor: Int32) -> [Region] {
        #if os(Linux)
        var file = stat()
        guard fstat(descriptor, &file) == 0 else { return [] }
        // glibc's encoding of a device number (gnu_dev_major, gnu_dev_minor); /proc writes major:minor in hex.
        let device = UInt64(file.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | ((device >> 12) & ~0xFF)
        guard let maps = fopen("/proc/self/maps", "r") else { return [] }
        defer { fclose(maps) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var regions: [Region] = []
        while getline(&line, &capacity, maps) > 0, let line {
            // start-end perms offset major:minor inode path
            let fields = String(cString: line).split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, UInt64(fields[4]) == UInt64(file.st_ino) else { continue }
            let numbers = fields[3].split(separator: ":").compactMap { UInt64($0, radix: 16) }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard numbers == [major, minor], bounds.count == 2, bounds[1] > bounds[0],
                let start = UnsafeMutableRawPointer(bitPattern: bounds[0])
            else { continue }
            regions.append(Region(start: start, size: Int(bounds[1] - bounds[0]), writable: fields[1].contains("w")))
        }
        return regions
        #else
        return []
        #endif
    }
}
