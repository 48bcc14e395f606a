import Foundation
@testable import LMDB
import Testing

/// `Environment.copy(to:compacting:fileMode:)`: LMDB's copy of an environment, with or without its free pages.
@Suite struct CopyTests {
    /// The size of a file in bytes.
    private func fileSize(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
    }

    /// The number of records of LMDB's free list (database 0), as of the last commit.
    private func freeListRecords(_ env: Environment) throws -> Int {
        try env.statistics(Database(handle: 0)).entries
    }

    /// Fills `db` with 2,000 values of 1 KiB, then deletes all but every tenth, over a few commits, so that the
    /// data file has many free pages.
    private func fillAndThin(_ env: Environment, _ db: Database) throws {
        try env.write { txn throws in
            for n in 0..<2000 { try txn.put(db, key: key(n), value: Array(repeating: UInt8(n % 251), count: 1024)) }
        }
        for start in stride(from: 0, to: 2000, by: 500) {
            try env.write { txn throws in
                for n in start..<start + 500 where n % 10 != 0 { _ = try txn.delete(db, key: key(n)) }
            }
        }
    }

    @Test("a compacting copy leaves out the freed pages: smaller than the source's pages in use, an empty free list, the same data")
    func compactingLeavesOutFreePages() throws {
        try withTemporaryDirectory { path throws in
            let (compacted, plain) = (path + "/compacted", path + "/plain")
            for directory in [compacted, plain] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
            let used = try withEnvironment { env, db throws -> Int in
                try fillAndThin(env, db)
                #expect(try freeListRecords(env) > 0, "the source has free pages")
                try env.copy(to: compacted, compacting: true)
                try env.copy(to: plain, compacting: false)
                return try env.usedSize
            }
            #expect(try fileSize(plain + "/data.mdb") == used, "a plain copy is page for page")
            #expect(try fileSize(compacted + "/data.mdb") * 3 < used, "the compacted copy holds a tenth of the data")

            let copy = try Environment(path: compacted, options: .init(readOnly: true))
            #expect(try freeListRecords(copy) == 0)
            #expect(try copy.read { try $0.freeListProblem() } == nil)
            #expect(try copy.usedSize == (try fileSize(compacted + "/data.mdb")))
            let db = try copy.openDatabase("test", create: false)
            #expect(try copy.statistics(db).entries == 200)
            #expect(try copy.read { txn in try txn.get(db, key: key(1990)).map(Array.init) } == Array(repeating: UInt8(1990 % 251), count: 1024))
            #expect(try copy.read { txn in try txn.get(db, key: key(1991)) } == nil)
        }
    }

    @Test("the copy's data file is new, mode 0600, and a copy never overwrites one: fileExists, the first copy intact")
    func newFileOwnerOnly() throws {
        try withTemporaryDirectory { path throws in
            try withEnvironment { env, db throws in
                try env.write { try $0.put(db, key: bytes("k"), value: bytes("first")) }
                try env.copy(to: path, compacting: true)
                try env.write { try $0.put(db, key: bytes("k"), value: bytes("second")) }
                #expect(throws: LMDBError.fileExists) { try env.copy(to: path, compacting: true) }
                #expect(throws: LMDBError.noSuchFile) { try env.copy(to: path + "/missing", compacting: true) }
                #expect(!FileManager.default.fileExists(atPath: path + "/missing"))
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
            let mode = try #require(attributes[.posixPermissions] as? NSNumber).intValue
            #expect(mode & 0o777 == 0o600, "mode \(String(mode, radix: 8))")
            let copy = try Environment(path: path, options: .init(readOnly: true))
            let db = try copy.openDatabase("test", create: false)
            #expect(try copy.read { try string($0.get(db, key: bytes("k"))) } == "first")
        }
    }

    @Test("a read-only environment can be copied, and a copy inside a transaction throws badTransaction")
    func readOnlySourceAndNesting() throws {
        try withTemporaryDirectory { path throws in
            let (source, copyPath) = (path + "/source", path + "/copy")
            for directory in [source, copyPath] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
            do {
                let env = try Environment(path: source)
                let db = try env.openDatabase("test", create: true)
                try env.write { txn throws in for n in 0..<10 { try txn.put(db, key: key(n), value: bytes("\(n)")) } }
            }
            let env = try Environment(path: source, options: .init(readOnly: true))
            #expect(throws: LMDBError.badTransaction) {
                try env.read { _ in try env.copy(to: copyPath, compacting: true) }
            }
            #expect(!FileManager.default.fileExists(atPath: copyPath + "/data.mdb"))
            try env.copy(to: copyPath, compacting: true)
            let copy = try Environment(path: copyPath, options: .init(readOnly: true))
            #expect(try copy.statistics(try copy.openDatabase("test", create: false)).entries == 10)
        }
    }

    @Test("a copy taken while another thread commits is one commit's snapshot: keys 0..<n, none missing")
    func snapshotWhileWriting() throws {
        try withTemporaryDirectory { path throws in
            let copies = (0..<4).map { path + "/copy-\($0)" }
            for directory in copies { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
            try withEnvironment { env, db throws in
                // Enough data that a copy takes a while.
                try env.write { txn throws in
                    for n in 0..<5000 { try txn.put(db, key: key(n), value: Array(repeating: 7, count: 512)) }
                }
                let done = Locked(false)
                try onThreads(2) { index in
                    if index == 0 {
                        var n = 5000
                        while !done.withLock({ $0 }) || n < 5100 {
                            try env.write { try $0.put(db, key: key(n), value: Array(repeating: 7, count: 512)) }
                            n += 1
                        }
                    } else {
                        defer { done.withLock { $0 = true } }
                        for copy in copies { try env.copy(to: copy, compacting: true) }
                    }
                }
            }
            var counts: [Int] = []
            for copyPath in copies {
                let copy = try Environment(path: copyPath, options: .init(readOnly: true))
                let db = try copy.openDatabase("test", create: false)
                let count = try copy.statistics(db).entries
                counts.append(count)
                #expect(try copy.read { txn in try txn.get(db, key: key(count - 1)) } != nil)
                #expect(try copy.read { txn in try txn.get(db, key: key(count)) } == nil)
                #expect(try copy.read { try $0.freeListProblem() } == nil)
            }
            #expect(counts == counts.sorted(), "later copies hold at least as much: \(counts)")
        }
    }
}
