import Foundation
import LMDB
import Testing

@Suite struct MapGrowthTests {
    static let count = 200_000
    static let value = [UInt8](repeating: 0x5A, count: 64)

    @Test func oneLargeWriteGrowsTheMap() throws {
        try withEnvironment(.init(mapSize: 1 << 20, durable: false)) { env, db throws in
            var attempts = 0
            try env.write { txn throws in
                attempts += 1
                for n in 0..<Self.count { try txn.put(db, key: key(n), value: Self.value) }
            }
            #expect(attempts > 1)
            #expect(env.mapSize > 1 << 20)
            #expect(try env.statistics(db).entries == Self.count)
            #expect(try env.read { try $0.get(db, key: key(Self.count - 1))?.count } == 64)
        }
    }

    /// A write whose body must not run twice (one that consumes a stream) reserves its room first.
    @Test func reserveGrowsTheMapAheadAndNeverShrinksIt() throws {
        try withEnvironment(.init(mapSize: 1 << 20, durable: false)) { env, db throws in
            let used = try env.usedSize
            #expect(used > 0 && used <= 1 << 20)
            let size = try env.reserve(freeBytes: 64 << 20)
            #expect(size >= used + (64 << 20))
            #expect(env.mapSize == size)
            #expect(try env.reserve(freeBytes: 1 << 20) == size, "a reserve never shrinks the map")
            var attempts = 0
            try env.write { txn throws in
                attempts += 1
                for n in 0..<Self.count { try txn.put(db, key: key(n), value: Self.value) }
            }
            #expect(attempts == 1, "the room was there: the body ran once")
            #expect(try env.usedSize > used + Self.count * 64)
            #expect(throws: LMDBError.badTransaction) { try env.read { _ in try env.reserve(freeBytes: 1) } }
        }
    }

    /// Pages read through the map may leave the resident set at any time, inside a transaction too.
    @Test func releasedMappedPagesReadBackTheSame() throws {
        try withEnvironment(.init(mapSize: 64 << 20, durable: false)) { env, db throws in
            try env.write { txn throws in
                for n in 0..<20_000 { try txn.put(db, key: key(n), value: Self.value) }
            }
            try env.read { txn throws in
                let before = try txn.get(db, key: key(7)).map(Array.init)
                env.releaseMappedPages()
                #expect(try txn.get(db, key: key(7)).map(Array.init) == before)
                #expect(try txn.statistics(db).entries == 20_000)
            }
            try env.write { txn throws in
                try txn.put(db, key: key(20_000), value: Self.value)
                env.releaseMappedPages()
                #expect(try txn.get(db, key: key(19_999)).map(Array.init) == Self.value)
            }
            #expect(try env.statistics(db).entries == 20_001)
        }
    }

    /// A release empties the process's resident share of the map; a budget releases it only once reads have
    /// brought in more than the budget. Measured per mapping (in `/proc/self/smaps`), so that tests running
    /// alongside cannot sway it.
    @Test func releaseAndBudgetLetTheMapLeaveTheResidentSet() throws {
        #if os(Linux)
        try withEnvironment(.init(mapSize: 256 << 20, durable: false)) { env, db throws in
            try env.write { txn throws in
                for n in 0..<Self.count { try txn.put(db, key: key(n), value: Self.value) }
            }
            let dataFile = env.path + "/data.mdb"
            try env.read { txn throws in
                var budget = Environment.ResidencyBudget(env, bytes: 256 << 20)
                let released = try residentKiB(ofMapping: dataFile)
                let cursor = try txn.cursor(db)
                var entry = try cursor.first()
                var seen = 0
                while entry != nil { seen += 1; entry = try cursor.next() }
                #expect(seen == Self.count)
                let read = try residentKiB(ofMapping: dataFile)
                #expect(read >= released + 8 * 1024, "reading every page (some 20 MB) made the map resident")
                #expect(Environment.residentFileBackedBytes.map { $0 >= read * 1024 } == true)
                let releasedUnderBudget = budget.releaseIfOverBudget()
                #expect(!releasedUnderBudget, "some 20 MB read against a budget of 256 MiB: nothing released")
                #expect(try residentKiB(ofMapping: dataFile) >= read)
                // The budget counts the whole process's file-backed memory, which tests running alongside grow
                // too: it is checked at once (a few microseconds after it was measured), and is large enough
                // that no neighbour fills it in that time, while the read below still overruns it.
                var small = Environment.ResidencyBudget(env, bytes: 8 << 20)
                let releasedAtOnce = small.releaseIfOverBudget()
                #expect(!releasedAtOnce, "nothing read since the budget began")
                #expect(try residentKiB(ofMapping: dataFile) <= read - 8 * 1024, "a new budget starts with a release")
                entry = try cursor.first()
                while entry != nil { entry = try cursor.next() }
                #expect(try residentKiB(ofMapping: dataFile) >= read - 1024)
                let releasedOverBudget = small.releaseIfOverBudget()
                #expect(releasedOverBudget, "some 20 MB read against a budget of 8 MiB")
                #expect(try residentKiB(ofMapping: dataFile) <= read - 8 * 1024)
                #expect(try txn.get(db, key: key(Self.count - 1)).map(Array.init) == Self.value, "released pages read back")
                env.releaseMappedPages()
                #expect(try residentKiB(ofMapping: dataFile) < 1024)
            }
        }
        #endif
    }

    @Test func manySmallWritesGrowTheMap() throws {
        try withEnvironment(.init(mapSize: 1 << 20, durable: false)) { env, db throws in
            let batch = 500
            for start in stride(from: 0, to: Self.count, by: batch) {
                try env.write { txn throws in
                    for n in start..<start + batch { try txn.put(db, key: key(n), value: Self.value) }
                }
            }
            #expect(env.mapSize > 1 << 20)
            #expect(try env.statistics(db).entries == Self.count)
        }
    }

    @Test func mapFullSwallowedByTheBodyStillGrows() throws {
        try withEnvironment(.init(mapSize: 1 << 20, durable: false)) { env, db throws in
            try env.write { txn throws in
                do {
                    for n in 0..<20_000 { try txn.put(db, key: key(n), value: Self.value) }
                } catch let error as LMDBError where error == .mapFull {
                    // Ignored on purpose: the commit must still report it and trigger growth.
                }
            }
            #expect(try env.statistics(db).entries == 20_000)
        }
    }

    /// The writer commits batches of entries together with a counter; every reader snapshot
    /// must see exactly `counter` entries, while the map grows underneath.
    @Test func concurrentReadersSeeConsistentSnapshots() throws {
        try withTemporaryDirectory { path throws in
            let env = try Environment(path: path, options: .init(mapSize: 1 << 20, durable: false))
            let data = try env.openDatabase("data", create: true)
            let meta = try env.openDatabase("meta", create: true)
            let done = Locked(false)
            let batches = 150, batch = 200, readers = 4
            try onThreads(readers + 1) { index throws in
                if index == 0 {
                    defer { done.withLock { $0 = true } }
                    for b in 0..<batches {
                        try env.write { txn throws in
                            for n in b * batch..<(b + 1) * batch {
                                try txn.put(data, key: key(n), value: Self.value)
                            }
                            try txn.put(meta, key: bytes("counter"), value: key((b + 1) * batch))
                        }
                    }
                    return
                }
                var reads = 0
                while reads < 50 || !done.withLock({ $0 }) {
                    reads += 1
                    try env.read { txn throws in
                        let counter = try txn.get(meta, key: bytes("counter")).map(Array.init) ?? key(0)
                        let entries = try txn.statistics(data).entries
                        #expect(key(entries) == counter)
                        if reads.isMultiple(of: 10), entries > 0 {
                            // Walk the last batch with a cursor: it must end exactly at the counter.
                            let cursor = try txn.cursor(data)
                            var seen = 0
                            var entry = try cursor.seek(atOrAfter: key(entries - batch))
                            while entry != nil { seen += 1; entry = try cursor.next() }
                            #expect(seen == batch)
                        }
                    }
                }
            }
            #expect(try env.statistics(data).entries == batches * batch)
            #expect(env.mapSize > 1 << 20)
        }
    }
}

/// The resident KiB of this process's mappings of the file at `path` (read from `/proc/self/smaps`).
func residentKiB(ofMapping path: String) throws -> Int {
    // Read to the end in a loop: the file reports no size, and one read gives only part of it.
    guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps") else { throw CocoaError(.fileReadNoPermission) }
    defer { try? file.close() }
    let smaps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    var total = 0
    var inMapping = false
    for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if let first = fields.first, first.contains("-"), first.last != ":" {
            inMapping = fields.last.map(String.init) == path
        } else if inMapping, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
            total += kib
        }
    }
    return total
}
