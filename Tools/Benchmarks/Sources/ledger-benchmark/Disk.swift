import Foundation

/// `ledger-benchmark disk [--dir DIR] [--rounds N]`: what one durable flush costs on this disk, by how many
/// 4 KiB pages it carries and where they lie (a diagnosis, not a benchmark of the ledger).
///
/// A durable LMDB commit writes each page it dirtied with `pwrite`, then calls `fdatasync`; pages taken from
/// LMDB's free list lie scattered through the file. This writes `n` pages at scattered places (distinct,
/// random, in a 256 MiB file), or `n` pages in one run, then times the `fdatasync`: the median and the 90th
/// percentile of `--rounds` flushes each. So the figures in docs/PERFORMANCE.md (a flush's fixed cost, and what each
/// scattered page adds) can be measured again on any machine.
func runDiskDiagnosis(_ arguments: [String]) throws {
    var directory = FileManager.default.temporaryDirectory.path
    var rounds = 30
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--dir": directory = iterator.next() ?? directory
        case "--rounds": rounds = max(3, Int(iterator.next() ?? "") ?? rounds)
        default:
            print("usage: ledger-benchmark disk [--dir DIR] [--rounds N]   (writes and removes a 256 MiB file in DIR)")
            exit(2)
        }
    }
    let path = directory + "/ledger-benchmark-disk-\(getpid()).bin"
    let pageSize = 4096
    let filePages = 65_536
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else {
        print("ledger-benchmark disk: \(path): cannot create the file (\(String(cString: strerror(errno))))")
        exit(1)
    }
    defer {
        close(fd)
        unlink(path)
    }
    // Blocks reserved first, so that the flushes time writes, not the file system's allocation.
    guard posix_fallocate(fd, 0, off_t(filePages * pageSize)) == 0, fsync(fd) == 0 else {
        print("ledger-benchmark disk: \(path): cannot reserve 256 MiB (\(String(cString: strerror(errno))))")
        exit(1)
    }
    var random = SystemRandomNumberGenerator()
    let buffer = [UInt8]((0..<(512 * pageSize)).map { _ in UInt8.random(in: 0...255, using: &random) })

    func flushMilliseconds(pages: Int, scattered: Bool) -> (median: Double, p90: Double) {
        var times: [Double] = []
        for _ in 0..<rounds {
            buffer.withUnsafeBytes { bytes in
                if scattered {
                    var places = Set<Int>()
                    while places.count < pages { places.insert(Int.random(in: 0..<filePages, using: &random)) }
                    for place in places.sorted() {
                        _ = pwrite(fd, bytes.baseAddress, pageSize, off_t(place * pageSize))
                    }
                } else if pages > 0 {
                    let place = Int.random(in: 0..<(filePages - pages), using: &random)
                    _ = pwrite(fd, bytes.baseAddress, pages * pageSize, off_t(place * pageSize))
                }
            }
            let start = now()
            guard fdatasync(fd) == 0 else {
                print("ledger-benchmark disk: fdatasync failed (\(String(cString: strerror(errno))))")
                exit(1)
            }
            times.append((now() - start) * 1e3)
        }
        times.sort()
        return (times[times.count / 2], times[min(times.count - 1, times.count * 9 / 10)])
    }

    print("one fdatasync after writing n pages of 4 KiB, \(rounds) flushes each (ms):")
    print("")
    print("| Pages | Scattered: median | p90 | In one run: median | p90 |")
    print("|---:|---:|---:|---:|---:|")
    for pages in [0, 1, 8, 32, 128, 512] {
        let scattered = flushMilliseconds(pages: pages, scattered: true)
        let contiguous = flushMilliseconds(pages: pages, scattered: false)
        print(String(format: "| %d | %.3f | %.3f | %.3f | %.3f |", pages, scattered.median, scattered.p90, contiguous.median, contiguous.p90))
    }
}
