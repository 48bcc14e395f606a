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
