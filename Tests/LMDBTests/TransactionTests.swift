import LMDB
import Testing

private struct Failure: Error {}

@Suite struct TransactionTests {
    @Test func putGetRoundTrip() throws {
        try withEnvironment { env, db throws in
            try env.write { txn throws in
                try txn.put(db, key: bytes("alpha"), value: bytes("one"))
                try bytes("beta").withUnsafeBytes { key in
                    try bytes("two").withUnsafeBytes { try txn.put(db, key: key, value: $0) }
                }
                try txn.put(db, key: bytes("empty"), value: [])
                #expect(try string(txn.get(db, key: bytes("alpha"))) == "one")
            }
            try env.read { txn throws in
                #expect(try string(txn.get(db, key: bytes("alpha"))) == "one")
                #expect(try bytes("beta").withUnsafeBytes { try string(txn.get(db, key: $0)) } == "two")
                #expect(try txn.get(db, key: bytes("empty"))?.count == 0)
                #expect(try txn.get(db, key: bytes("missing")) == nil)
                #expect(throws: LMDBError.badValueSize) { try txn.get(db, key: []) }
                #expect(try txn.statistics(db).entries == 3)
            }
            try env.write { txn throws in
                try txn.put(db, key: bytes("alpha"), value: bytes("uno"))
                #expect(try string(txn.reader.get(db, key: bytes("alpha"))) == "uno")
            }
            #expect(try env.read { try string($0.get(db, key: bytes("alpha"))) } == "uno")
        }
    }

    /// Reads of one snapshot share its id; a commit makes a new one, an aborted write does not.
    @Test func snapshotIDsChangeWithCommitsOnly() throws {
        try withEnvironment { env, db throws in
            let first = try env.read { try $0.snapshotID() }
            #expect(try env.read { try $0.snapshotID() } == first)
            try env.write { try $0.put(db, key: bytes("k"), value: bytes("v")) }
            let second = try env.read { try $0.snapshotID() }
            #expect(second > first)
            #expect(throws: Failure.self) {
                try env.write { txn throws in
                    try txn.put(db, key: bytes("k"), value: bytes("w"))
                    throw Failure()
                }
            }
            #expect(try env.read { try $0.snapshotID() } == second)
            // A write's own id names no committed snapshot.
            try env.write { txn throws in
                _ = #expect(throws: LMDBError.invalidArgument) { try txn.reader.snapshotID() }
            }
        }
    }

    @Test func throwingBodyAborts() throws {
        try withEnvironment { env, db throws in
            #expect(throws: Failure.self) {
                try env.write { txn throws in
                    try txn.put(db, key: bytes("k"), value: bytes("v"))
                    throw Failure()
                }
            }
            #expect(try env.read { try $0.get(db, key: bytes("k")) } == nil)
            #expect(try env.statistics(db).entries == 0)
        }
    }

    @Test func noOverwriteThrowsKeyExists() throws {
        try withEnvironment { env, db throws in
            try env.write { try $0.put(db, key: bytes("k"), value: bytes("first"), flags: .noOverwrite) }
            #expect(throws: LMDBError.keyExists) {
                try env.write { try $0.put(db, key: bytes("k"), value: bytes("second"), flags: .noOverwrite) }
            }
            #expect(try env.read { try string($0.get(db, key: bytes("k"))) } == "first")
        }
    }

    @Test func appendOutOfOrderThrowsKeyExists() throws {
        try withEnvironment { env, db throws in
            try env.write { txn throws in
                for n in 0..<10 { try txn.put(db, key: key(n), value: [UInt8(n)], flags: .append) }
            }
            #expect(throws: LMDBError.keyExists) {
                try env.write { try $0.put(db, key: key(5), value: [], flags: .append) }
            }
            #expect(try env.statistics(db).entries == 10)
        }
    }

    @Test func deleteReportsWhetherTheKeyExisted() throws {
        try withEnvironment { env, db throws in
            try env.write { txn throws in
                try txn.put(db, key: bytes("a"), value: bytes("1"))
                try txn.put(db, key: bytes("b"), value: bytes("2"))
            }
            try env.write { txn throws in
                #expect(try txn.delete(db, key: bytes("a")))
                #expect(try !txn.delete(db, key: bytes("a")))
                #expect(try !txn.delete(db, key: bytes("zzz")))
            }
            try env.read { txn throws in
                #expect(try txn.get(db, key: bytes("a")) == nil)
                #expect(try string(txn.get(db, key: bytes("b"))) == "2")
            }
        }
    }

    @Test func dropEmptiesTheDatabaseOnly() throws {
        try withEnvironment { env, db throws in
            let other = try env.openDatabase("other", create: true)
            #expect(db != other)
            try env.write { txn throws in
                for n in 0..<500 { try txn.put(db, key: key(n), value: bytes("\(n)")) }
                try txn.put(other, key: bytes("keep"), value: bytes("me"))
            }
            try env.write { try $0.drop(db) }
            #expect(try env.statistics(db).entries == 0)
            #expect(try env.read { try string($0.get(other, key: bytes("keep"))) } == "me")
            try env.write { try $0.put(db, key: bytes("again"), value: []) }
            #expect(try env.statistics(db).entries == 1)
            #expect(try env.openDatabase("test", create: false) == db)
        }
    }

    @Test func deleteDatabaseRemovesItsNameAndFreesItsPages() throws {
        try withEnvironment { env, db throws in
            let retired = try env.openDatabase("retired", create: true)
            func fill(_ target: Database) throws {
                try env.write { txn throws in
                    for n in 0..<2_000 { try txn.put(target, key: key(n), value: bytes(String(repeating: "x", count: 100))) }
                }
            }
            try fill(retired)
            try env.write { try $0.put(db, key: bytes("keep"), value: bytes("me")) }
            let pages = try env.statistics(retired).leafPages
            #expect(pages > 40)
            #expect(try env.write { try $0.deleteDatabase(named: "retired") })
            #expect(try env.write { try $0.deleteDatabase(named: "retired") } == false, "nothing left to delete")
            #expect(try env.read { try $0.databaseNames() } == ["test"])
            #expect(throws: LMDBError.notFound) { try env.openDatabase("retired", create: false) }
            #expect(try env.read { try string($0.get(db, key: bytes("keep"))) } == "me")
            // As many rows again, elsewhere, go into the pages the deleted database freed: the file hardly grows.
            let lastPage = try env.read { try $0.lastCommittedPage() }
            try fill(try env.openDatabase("again", create: true))
            #expect(try env.read { try $0.lastCommittedPage() } < lastPage + UInt64(pages / 2))
        }
    }
}

@Suite struct NestedTransactionTests {
    @Test func committedNestedChangesJoinTheParent() throws {
        try withEnvironment { env, db throws in
            try env.write { txn throws in
                try txn.put(db, key: bytes("outer"), value: bytes("1"))
                let seen = try txn.nested { child throws in
                    try child.put(db, key: bytes("inner"), value: bytes("2"))
                    return try string(child.get(db, key: bytes("outer")))
                }
                #expect(seen == "1")
                #expect(try string(txn.get(db, key: bytes("inner"))) == "2")
            }
            #expect(try env.read { try string($0.get(db, key: bytes("inner"))) } == "2")
        }
    }

    @Test func aThrowingNestedTransactionLeavesTheParentAsItWas() throws {
        try withEnvironment { env, db throws in
            try env.write { txn throws in
                try txn.put(db, key: bytes("a"), value: bytes("kept"))
                let cursor = try txn.cursor(db)
                #expect(try cursor.first().map { String(decoding: $0.key, as: UTF8.self) } == "a")
                #expect(throws: Failure.self) {
                    try txn.nested { child throws in
                        try child.put(db, key: bytes("b"), value: bytes("dropped"))
                        try child.put(db, key: bytes("a"), value: bytes("overwritten"))
                        throw Failure()
                    }
                }
                #expect(try string(txn.get(db, key: bytes("a"))) == "kept")
                #expect(try txn.get(db, key: bytes("b")) == nil)
                // The parent's cursor still works after the child ended.
                #expect(try cursor.first().map { String(decoding: $0.key, as: UTF8.self) } == "a")
                #expect(try cursor.next() == nil)
                try txn.put(db, key: bytes("c"), value: bytes("after"))
            }
            try env.read { txn throws in
                #expect(try txn.statistics(db).entries == 2)
                #expect(try string(txn.get(db, key: bytes("c"))) == "after")
            }
        }
    }

    @Test func aFullMapInANestedTransactionGrowsTheMapAndRetriesTheWhole() throws {
        try withEnvironment(.init(mapSize: 1 << 20, durable: false)) { env, db throws in
            var runs = 0
            try env.write { txn throws in
                runs += 1
                try txn.put(db, key: bytes("before"), value: [1])
                try txn.nested { child throws in
                    for i in 0..<400 {
                        try child.put(db, key: key(i), value: [UInt8](repeating: 7, count: 8_000))
                    }
                }
            }
            #expect(runs > 1)
            #expect(env.mapSize > 1 << 20)
            #expect(try env.read { try $0.statistics(db).entries } == 401)
        }
    }
}
