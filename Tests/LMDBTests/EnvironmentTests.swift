import Foundation
@testable import LMDB
import Testing

@Suite struct EnvironmentTests {
    @Test func errorDescriptionsComeFromLMDB() {
        #expect(LMDBError.notFound.description.contains("MDB_NOTFOUND"))
        #expect(LMDBError.keyExists.description.contains("MDB_KEYEXIST"))
        #expect(LMDBError.mapFull.description.contains("MDB_MAP_FULL"))
        #expect(LMDBError.notFound.rawValue == -30798)
        #expect(LMDBError.badDatabase.rawValue == -30780)
        #expect(LMDBError(rawValue: -30798) == .notFound)
        #expect(!LMDBError.noSuchFile.description.isEmpty)
        #expect(LMDBError.noSuchFile != LMDBError.accessDenied)
    }

    @Test func missingDirectoryThrowsNoSuchFile() throws {
        try withTemporaryDirectory { path throws in
            #expect(throws: LMDBError.noSuchFile) { try Environment(path: path + "/missing") }
        }
    }

    @Test func readOnlyWithoutEnvironmentFails() throws {
        try withTemporaryDirectory { path throws in
            #expect(throws: LMDBError.noSuchFile) { try Environment(path: path, options: .init(readOnly: true)) }
            #expect(!FileManager.default.fileExists(atPath: path + "/data.mdb"))
        }
    }

    @Test func foreignDataFileIsInvalid() throws {
        try withTemporaryDirectory { path throws in
            try Data(repeating: 0xAB, count: 16 << 10).write(to: URL(fileURLWithPath: path + "/data.mdb"))
            #expect(throws: LMDBError.invalid) { try Environment(path: path) }
        }
    }

    @Test func dataFileIsCreatedWithMode0600() throws {
        try withTemporaryDirectory { path throws in
            let env = try Environment(path: path)
            _ = try env.openDatabase("test", create: true)
            for file in ["data.mdb", "lock.mdb"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + file)
                let mode = try #require(attributes[.posixPermissions] as? NSNumber).intValue
                #expect(mode & 0o777 == 0o600, "\(file) mode \(String(mode, radix: 8))")
            }
        }
    }

    @Test func commitPersistsAcrossReopen() throws {
        try withTemporaryDirectory { path throws in
            do {
                let env = try Environment(path: path)
                let db = try env.openDatabase("test", create: true)
                try env.write { try $0.put(db, key: bytes("k"), value: bytes("v")) }
                try env.sync()
                #expect(env.path == path)
            }
            do {
                let env = try Environment(path: path, options: .init(readOnly: true))
                #expect(throws: LMDBError.notFound) { try env.openDatabase("other", create: false) }
                let db = try env.openDatabase("test", create: false)
                #expect(try env.read { try string($0.get(db, key: bytes("k"))) } == "v")
                #expect(try env.statistics(db).entries == 1)
                #expect(throws: LMDBError.accessDenied) { try env.write { try $0.put(db, key: bytes("x"), value: []) } }
            }
        }
    }

    @Test func copyProducesAnOpenableEnvironment() throws {
        try withTemporaryDirectory { path throws in
            for compact in [false, true] {
                let copyPath = path + "/copy-\(compact)"
                try FileManager.default.createDirectory(atPath: copyPath, withIntermediateDirectories: false)
                try withEnvironment { env, db throws in
                    try env.write { txn throws in
                        for n in 0..<100 { try txn.put(db, key: key(n), value: bytes("value \(n)")) }
                    }
                    try env.copy(to: copyPath, compacting: compact)
                }
                let copy = try Environment(path: copyPath)
                let db = try copy.openDatabase("test", create: false)
                #expect(try copy.statistics(db).entries == 100)
                #expect(try copy.read { try string($0.get(db, key: key(42))) } == "value 42")
            }
        }
    }

    @Test func environmentUtilities() throws {
        try withEnvironment { env, db throws in
            #expect(env.mapSize == 64 << 20)
            #expect(env.maxKeySize >= 511)
            #expect(try env.clearStaleReaders() == 0)
            try env.sync(force: false)
            try env.setMapSize(128 << 20)
            #expect(env.mapSize == 128 << 20)
            let stats = try env.statistics(db)
            #expect(stats.entries == 0)
            #expect(stats.pageSize > 0)
        }
    }

    @Test func nestingRules() throws {
        try withEnvironment { env, db throws in
            try env.write { try $0.put(db, key: bytes("a"), value: bytes("1")) }
            try env.write { txn throws in
                try txn.put(db, key: bytes("a"), value: bytes("2"))
                #expect(throws: LMDBError.badTransaction) { try env.write { _ in } }
                #expect(throws: LMDBError.badTransaction) { try env.setMapSize(1 << 30) }
                #expect(throws: LMDBError.badTransaction) { try env.openDatabase("other", create: true) }
                // A nested read sees the last commit, not this transaction's changes.
                #expect(try env.read { try string($0.get(db, key: bytes("a"))) } == "1")
                #expect(try string(txn.get(db, key: bytes("a"))) == "2")
            }
            try env.read { outer throws in
                #expect(throws: LMDBError.badTransaction) { try env.write { _ in } }
                #expect(try env.read { try string($0.get(db, key: bytes("a"))) } == "2")
                #expect(try string(outer.get(db, key: bytes("a"))) == "2")
            }
        }
    }

    @Test func escapedTransactionsAndCursorsThrow() throws {
        try withEnvironment { env, db throws in
            let txn = try env.write { txn throws in
                try txn.put(db, key: bytes("a"), value: bytes("1"))
                return txn
            }
            #expect(throws: LMDBError.badTransaction) { try txn.put(db, key: bytes("b"), value: []) }
            let (reader, cursor) = try env.read { ($0, try $0.cursor(db)) }
            #expect(throws: LMDBError.badTransaction) { try reader.get(db, key: bytes("a")) }
            #expect(throws: LMDBError.badTransaction) { try cursor.first() }
        }
    }
}

@Suite struct OpeningRulesTests {
    @Test func anEnvironmentOpenTwiceInOneProcessIsRefused() throws {
        try withTemporaryDirectory { path throws in
            var first: Environment? = try Environment(path: path, options: .init(durable: false))
            #expect(first != nil)
            #expect(throws: LMDBError.alreadyOpen) { try Environment(path: path) }
            #expect(throws: LMDBError.alreadyOpen) { try Environment(path: path + "/.", options: .init(readOnly: true)) }
            #expect(LMDBError.alreadyOpen.description == "the environment is already open in this process")
            first = nil
            _ = try Environment(path: path)
        }
    }

    @Test func procIsNotAFileSystemForEnvironments() throws {
        #expect(throws: LMDBError.unsupportedFileSystem) { try Environment(path: "/proc/self") }
        #expect(Environment.fileSystemProblem(at: "/proc/self") == "it is in /proc, which holds no files")
        #expect(Environment.fileSystemProblem(at: FileManager.default.temporaryDirectory.path) == nil)
    }

    @Test func networkFileSystemsAreRecognized() {
        #expect(FileSystemCheck.problem(type: 0x6969) == "it is on NFS, a network file system")
        #expect(FileSystemCheck.problem(type: 0xFF53_4D42)?.contains("SMB/CIFS") == true)
        #expect(FileSystemCheck.problem(type: 0x0102_1997)?.contains("9P") == true)
        #expect(FileSystemCheck.problem(type: 0xEF53) == nil, "ext4 is local")
        #expect(FileSystemCheck.problem(type: 0x0102_1994) == nil, "tmpfs is local")
        #expect(FileSystemCheck.problem(typeName: "smbfs") != nil)
        #expect(FileSystemCheck.problem(typeName: "apfs") == nil)
    }
}
