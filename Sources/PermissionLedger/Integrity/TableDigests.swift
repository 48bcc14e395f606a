internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

extension Ledger {
    /// The SHA-256 of every named database's key/value pairs, read with plain cursor scans and nothing else of
    /// the ledger's logic: how tests of damage detection tell whether damage changed what a reader sees.
    ///
    /// - Returns: per database (in LMDB's order of names), its name, number of rows and digest in hex.
    /// - Throws: ``/LMDB/LMDBError`` when LMDB cannot open or read the environment.
    package static func tableDigests(path: String) throws -> [(table: String, rows: Int, digest: String)] {
        let environment = try Environment(path: path, options: .init(maxDatabases: 256, readOnly: true))
        let names = try environment.read { try $0.databaseNames() }
        let databases = try names.map { try environment.openDatabase($0, create: false) }
        return try environment.read { txn in
            try zip(names, databases).map { name, db in
                var hash = SHA256()
                var rows = 0
                let cursor = try txn.cursor(db)
                var entry = try cursor.first()
                while let e = entry {
                    for bytes in [e.key, e.value] {
                        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { hash.update(bufferPointer: $0) }
                        hash.update(bufferPointer: bytes)
                    }
                    rows += 1
                    entry = try cursor.next()
                }
                return (name, rows, hash.finalize().map { String(format: "%02x", $0) }.joined())
            }
        }
    }
}
