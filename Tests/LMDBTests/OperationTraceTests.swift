import Foundation
import LMDB
import Testing

/// What ``Environment/perform(_:asWrite:databases:)`` adds up of a value it reads: its 8-byte words as the machine
/// loads them, then its last bytes one by one.
private func fold(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBytes { buffer in
        var sum: UInt64 = 0
        var index = 0
        while index + 8 <= buffer.count {
            sum &+= buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < buffer.count { sum &+= UInt64(buffer[index]); index += 1 }
        return sum
    }
}

/// One recording at a time in the process: the suite's tests run one after the other.
@Suite(.serialized) struct OperationTraceTests {
    /// Every entry of `db`, in key order.
    private func entries(_ env: Environment, _ db: Database) throws -> [[UInt8]: [UInt8]] {
        try env.read { txn in
            let cursor = try txn.cursor(db)
            var result: [[UInt8]: [UInt8]] = [:]
            var entry = try cursor.first()
            while let (key, value) = entry {
                result[Array(key)] = Array(value)
                entry = try cursor.next()
            }
            return result
        }
    }

    /// Writes through every kind of write the trace records: put, put through a cursor (appending), delete,
    /// and a put of a key that is there already with `noOverwrite`, which fails and is recorded all the same.
    private func writeEverything(_ env: Environment, _ db: Database, _ other: Database) throws {
        try env.write { txn in
            for n in [5, 1, 9, 3] { try txn.put(db, key: key(n), value: bytes("value \(n)")) }
            let cursor = try txn.cursor(other)
            for n in 0..<20 { try cursor.put(key: key(n), value: bytes("appended \(n)"), flags: .append) }
            try txn.delete(db, key: key(9))
            try txn.put(db, key: key(5), value: bytes("value 5 again"))
            #expect(throws: LMDBError.keyExists) { try txn.put(db, key: key(1), value: bytes("never"), flags: .noOverwrite) }
        }
    }

    /// Two environments, `a` and `b`, each with the databases "first" and "second", opened in `b` in the other
    /// order so that the handles differ and a mapping between them matters: `body(a, b, aFirst, aSecond, bFirst, bSecond)`.
    private func withTwoEnvironments(
        _ body: (Environment, Environment, Database, Database, Database, Database) throws -> Void
    ) throws {
        try withTemporaryDirectory { path in
            for name in ["a", "b"] { try FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true) }
            let a = try Environment(path: path + "/a", options: .init(durable: false))
            let b = try Environment(path: path + "/b", options: .init(durable: false))
            let (aFirst, aSecond) = (try a.openDatabase("first", create: true), try a.openDatabase("second", create: true))
            let (bSecond, bFirst) = (try b.openDatabase("second", create: true), try b.openDatabase("first", create: true))
            #expect(a.databases == ["first": aFirst, "second": aSecond])
            #expect(aFirst != bFirst)
            try body(a, b, aFirst, aSecond, bFirst, bSecond)
        }
    }

    @Test func writesPerformedElsewhereLeaveTheSameDatabases() throws {
        try withTwoEnvironments { a, b, aFirst, aSecond, bFirst, bSecond in
            let (_, trace) = try OperationTrace.recording { try writeEverything(a, aFirst, aSecond) }
            #expect(trace.count == 4 + 1 + 20 + 1 + 1 + 1)
            let written = trace.writes()
            #expect(written[aFirst]?.operations == 7)
            #expect(written[aSecond]?.operations == 20)
            #expect(written[aSecond]?.bytes == (0..<20).reduce(0) { $0 + 16 + "appended \($1)".utf8.count })

            _ = try b.perform(trace, asWrite: true, databases: [aFirst: bFirst, aSecond: bSecond])
            #expect(try entries(b, bFirst) == entries(a, aFirst))
            #expect(try entries(b, bSecond) == entries(a, aSecond))
            #expect(try entries(b, bFirst)[key(5)] == bytes("value 5 again"))
            #expect(try entries(b, bFirst)[key(9)] == nil)
        }
    }

    /// The names are kept under a lock of their own: reading them inside a write, which holds the writer's
    /// lock, does not wait for itself.
    @Test(.timeLimit(.minutes(1))) func theDatabasesCanBeListedInsideAWrite() throws {
        try withTwoEnvironments { a, _, aFirst, _, _, _ in
            try a.write { txn in
                try txn.put(aFirst, key: key(1), value: bytes("one"))
                #expect(a.databases.keys.sorted() == ["first", "second"])
            }
        }
    }

    @Test func writesInKeyOrderLeaveTheSameDatabases() throws {
        try withTwoEnvironments { a, b, aFirst, aSecond, bFirst, bSecond in
            let (_, trace) = try OperationTrace.recording { try writeEverything(a, aFirst, aSecond) }
            let sorted = trace.inKeyOrder()
            #expect(sorted.count == trace.count)
            // The put of 5 again after its first put, and the delete of 9 after its put: the last writes win.
            _ = try b.perform(sorted, asWrite: true, databases: [aFirst: bFirst, aSecond: bSecond])
            #expect(try entries(b, bFirst) == entries(a, aFirst))
            #expect(try entries(b, bSecond) == entries(a, aSecond))
        }
    }

    @Test func writesMadeAppendsLandAtTheEndOfTheirDatabaseInTheirOrder() throws {
        try withTwoEnvironments { a, b, aFirst, aSecond, bFirst, bSecond in
            let (_, trace) = try OperationTrace.recording { try writeEverything(a, aFirst, aSecond) }
            var counter: UInt64 = 41
            let appended = trace.appending([aFirst], counter: &counter)
            // The delete of 9 is left out; the put that failed is appended all the same.
            #expect(appended.count == trace.count - 1)
            #expect(counter == 41 + 6)
            _ = try b.perform(appended, asWrite: true, databases: [aFirst: bFirst, aSecond: bSecond])
            let values = ["value 5", "value 1", "value 9", "value 3", "value 5 again", "never"].map(bytes)
            let keys = (42...47).map { [UInt8](repeating: 0xFF, count: 8) + withUnsafeBytes(of: UInt64($0).bigEndian) { Array($0) } }
            #expect(try entries(b, bFirst) == Dictionary(uniqueKeysWithValues: zip(keys, values)))
            #expect(try entries(b, bSecond) == entries(a, aSecond))
        }
    }

    @Test func writesRewrittenGoToTheDatabaseAndKeysTheyAreGiven() throws {
        try withTwoEnvironments { a, b, aFirst, aSecond, bFirst, bSecond in
            let (_, trace) = try OperationTrace.recording { try writeEverything(a, aFirst, aSecond) }
            var keys: [[UInt8]] = []
            // The appends to the second database, made puts into the first under keys of their own.
            let rewritten = trace.rewriting([aSecond], into: aFirst) { key in
                keys.append(key)
                return [0xEE] + key
            }
            #expect(keys == (0..<20).map(key))
            #expect(rewritten.count == trace.count)
            _ = try b.perform(rewritten, asWrite: true, databases: [aFirst: bFirst, aSecond: bSecond])
            let moved = (0..<20).map { ([0xEE] + key($0), bytes("appended \($0)")) }
            #expect(try entries(b, bFirst) == entries(a, aFirst).merging(moved) { _, new in new })
            #expect(try entries(b, bSecond).isEmpty)
        }
    }

    @Test func readsPerformedAgainReadTheSameValues() throws {
        try withEnvironment { env, db in
            try env.write { txn in
                for n in 0..<100 { try txn.put(db, key: key(n), value: [UInt8](repeating: UInt8(n), count: n + 1)) }
            }
            let ((), trace) = try OperationTrace.recording {
                try env.read { txn in
                    _ = try txn.get(db, key: key(7))
                    _ = try txn.get(db, key: key(1_000))
                    let cursor = try txn.cursor(db)
                    _ = try cursor.seek(atOrAfter: key(40))
                    _ = try cursor.next()
                    _ = try cursor.previous()
                }
            }
            #expect(trace.count == 2 + 1 + 3)
            // The values found: at key 7, nothing at 1,000, then at 40, 41 and 40 again.
            let found = [7, 40, 41, 40].map { [UInt8](repeating: UInt8($0), count: $0 + 1) }
            #expect(try env.perform(trace) == found.reduce(0) { $0 &+ fold($1) })
        }
    }

    @Test func onlyTheRecordingThreadIsRecorded() throws {
        try withEnvironment { env, db in
            try env.write { txn in try txn.put(db, key: key(1), value: bytes("one")) }
            let ((), trace) = try OperationTrace.recording {
                try onThreads(2) { _ in
                    _ = try env.read { txn in try txn.get(db, key: key(1)) }
                }
                _ = try env.read { txn in try txn.get(db, key: key(1)) }
            }
            #expect(trace.count == 1)
        }
    }
}
