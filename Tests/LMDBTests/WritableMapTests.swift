import Foundation
import LMDB
import Testing

/// `Options.writableMap` (`MDB_WRITEMAP`): LMDB sizes the data file to the map, so the environment reserves
/// the file's blocks whenever the map is sized, and never lets the file be cut below what is in it.
@Suite struct WritableMapTests {
    static let value = [UInt8](repeating: 0xA5, count: 100)

    /// The data file's size and the bytes of disk allocated to it.
    static func file(_ directory: String) throws -> (size: Int, allocated: Int) {
        var status = stat()
        try #require(stat(directory + "/data.mdb", &status) == 0)
        return (Int(status.st_size), Int(status.st_blocks) * 512)
    }

    @Test func theFileIsReservedUpToTheMapWhenItOpensAndWhenItGrows() throws {
        try withEnvironment(.init(mapSize: 1 << 20, writableMap: true)) { env, db throws in
            let opened = try Self.file(env.path)
            #expect(opened.size == env.mapSize)
            #expect(opened.allocated >= opened.size, "no hole: a write into the map cannot fault on a full disk")

            var attempts = 0
            try env.write { txn throws in
                attempts += 1
                for n in 0..<50_000 { try txn.put(db, key: key(n), value: Self.value) }
            }
            #expect(attempts > 1, "the map filled and grew")
            let grown = try Self.file(env.path)
            #expect(grown.size == env.mapSize && grown.size > opened.size)
            #expect(grown.allocated >= grown.size)

            let reserved = try env.reserve(freeBytes: 32 << 20)
            #expect(try Self.file(env.path).allocated >= reserved)
            #expect(try env.read { try $0.get(db, key: key(49_999)).map { Array($0) } } == Self.value)
        }
    }

    /// Another process's writer may have written pages past the end of the file that it has not committed
    /// yet; LMDB would cut the file to the map's size. Here the bytes past the pages in use stand for them.
    @Test func openingNeverCutsTheFileBelowItsSizeNorBelowTwiceThePagesInUse() throws {
        try withTemporaryDirectory { path throws in
            do {
                let env = try Environment(path: path, options: .init(mapSize: 64 << 20, durable: false))
                let db = try env.openDatabase("test", create: true)
                try env.write { txn throws in
                    for n in 0..<20_000 { try txn.put(db, key: key(n), value: Self.value) }
                }
            }
            let used = try Self.file(path).size
            let tail = [UInt8](repeating: 0x7E, count: 4096)
            let handle = try #require(FileHandle(forUpdatingAtPath: path + "/data.mdb"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(tail))
            try handle.close()

            let env = try Environment(path: path, options: .init(mapSize: 1 << 20, writableMap: true))
            let file = try Self.file(path)
            #expect(env.mapSize >= 2 * used && file.size == env.mapSize)
            #expect(file.allocated >= file.size)
            let reading = try #require(FileHandle(forReadingAtPath: path + "/data.mdb"))
            try reading.seek(toOffset: UInt64(used))
            #expect(try reading.read(upToCount: tail.count).map { [UInt8]($0) } == tail, "the bytes past the pages in use are still there")
            try reading.close()
            let db = try env.openDatabase("test", create: false)
            #expect(try env.statistics(db).entries == 20_000)
        }
    }

    @Test func aReadOnlyOpenIgnoresIt() throws {
        try withTemporaryDirectory { path throws in
            do {
                let env = try Environment(path: path, options: .init(mapSize: 1 << 20, durable: false))
                _ = try env.openDatabase("test", create: true)
            }
            let size = try Self.file(path).size
            let env = try Environment(path: path, options: .init(mapSize: 64 << 20, readOnly: true, writableMap: true))
            #expect(try Self.file(path).size == size, "a read-only open does not size the file")
            #expect(throws: LMDBError.accessDenied) { try env.write { _ in } }
        }
    }
}
