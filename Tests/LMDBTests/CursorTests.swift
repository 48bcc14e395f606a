import LMDB
import Testing

@Suite struct CursorTests {
    private func fill(_ env: Environment, _ db: Database) throws {
        try env.write { txn throws in
            for word in ["delta", "alpha", "echo", "charlie", "bravo", "b"] {
                try txn.put(db, key: bytes(word), value: bytes(word.uppercased()))
            }
        }
    }

    /// The keys of `db` from first to last, each checked to hold its key in upper case (as `fill` stores).
    private func keysForward(_ txn: ReadTransaction, _ db: Database) throws -> [String] {
        let cursor = try txn.cursor(db)
        var keys: [String] = []
        var entry = try cursor.first()
        while let (key, value) = entry {
            #expect(string(value) == string(key)?.uppercased())
            keys.append(string(key)!)
            entry = try cursor.next()
        }
        return keys
    }

    @Test func iteratesInKeyOrder() throws {
        try withEnvironment { env, db throws in
            try fill(env, db)
            let sorted = ["alpha", "b", "bravo", "charlie", "delta", "echo"]
            try env.read { txn throws in
                #expect(try keysForward(txn, db) == sorted)

                let cursor = try txn.cursor(db)
                var backward: [String] = []
                var entry = try cursor.last()
                while let current = entry {
                    backward.append(string(current.key)!)
                    entry = try cursor.previous()
                }
                #expect(backward == sorted.reversed())
            }
        }
    }

    @Test func putsThroughACursor() throws {
        try withEnvironment { env, db throws in
            try env.write { txn throws in
                let cursor = try txn.cursor(db)
                for word in ["alpha", "bravo", "charlie"] {
                    try cursor.put(key: bytes(word), value: bytes(word.uppercased()), flags: .append)
                    #expect(try cursor.current().map { string($0.key) } == word, "the cursor moves to what it put")
                }
                // A key that does not sort last is refused by an append and stored by a plain put.
                #expect(throws: LMDBError.keyExists) { try cursor.put(key: bytes("b"), value: bytes("B"), flags: .append) }
                #expect(throws: LMDBError.keyExists) { try cursor.put(key: bytes("charlie"), value: bytes("C"), flags: .append) }
                try cursor.put(key: bytes("b"), value: bytes("B"))
                #expect(throws: LMDBError.keyExists) { try cursor.put(key: bytes("b"), value: bytes("X"), flags: .noOverwrite) }
            }
            try env.read { txn throws in
                #expect(try keysForward(txn, db) == ["alpha", "b", "bravo", "charlie"])
            }
        }
    }

    @Test func seeks() throws {
        try withEnvironment { env, db throws in
            try fill(env, db)
            try env.read { txn throws in
                let cursor = try txn.cursor(db)
                #expect(try string(cursor.seek(bytes("charlie"))?.value) == "CHARLIE")
                #expect(try string(cursor.current()?.key) == "charlie")
                #expect(try cursor.seek(bytes("charles")) == nil)
                #expect(try string(cursor.seek(atOrAfter: bytes("c"))?.key) == "charlie")
                #expect(try string(cursor.previous()?.key) == "bravo")
                #expect(try string(cursor.seek(atOrAfter: bytes("bravo"))?.key) == "bravo")
                #expect(try bytes("d").withUnsafeBytes { try string(cursor.seek(atOrAfter: $0)?.key) } == "delta")
                #expect(try string(cursor.next()?.key) == "echo")
                #expect(try cursor.next() == nil)
                #expect(try cursor.seek(atOrAfter: bytes("zulu")) == nil)
                #expect(throws: LMDBError.badValueSize) { try cursor.seek(atOrAfter: []) }
            }
        }
    }

    @Test func emptyDatabase() throws {
        try withEnvironment { env, db throws in
            try env.read { txn throws in
                let cursor = try txn.cursor(db)
                #expect(try cursor.first() == nil)
                #expect(try cursor.last() == nil)
                #expect(try cursor.next() == nil)
                #expect(try cursor.seek(atOrAfter: bytes("a")) == nil)
            }
        }
    }

    @Test func cursorsInWriteTransactions() throws {
        try withEnvironment { env, db throws in
            try fill(env, db)
            try env.write { txn throws in
                do {
                    let early = try txn.cursor(db)  // closed on deinit, before the commit
                    #expect(try string(early.first()?.key) == "alpha")
                }
                let cursor = try txn.cursor(db)
                try txn.put(db, key: bytes("aardvark"), value: bytes("AARDVARK"))
                #expect(try string(cursor.first()?.key) == "aardvark")
                #expect(try txn.delete(db, key: bytes("b")))
                #expect(try string(cursor.seek(atOrAfter: bytes("b"))?.key) == "bravo")
                let reader = try txn.reader.cursor(db)
                #expect(try string(reader.last()?.key) == "echo")
            }
            #expect(try env.statistics(db).entries == 6)
        }
    }

    @Test func manyCursorsInOneReadTransaction() throws {
        try withEnvironment { env, db throws in
            try fill(env, db)
            try env.read { txn throws in
                let cursors = try (0..<50).map { _ in try txn.cursor(db) }
                for cursor in cursors { #expect(try string(cursor.last()?.key) == "echo") }
            }
        }
    }
}
