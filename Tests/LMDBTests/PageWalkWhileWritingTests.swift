import Foundation
import LMDB
import Testing

/// A page walk of the commit a read transaction shows, while a writer commits: the meta page of that commit
/// can be rewritten (two commits later) between the walk's choice of it and its reading of the trees, and the
/// walk must then say that the commit was replaced, never report the newer commit's pages as damage.
@Suite struct PageWalkWhileWritingTests {
    @Test("walks of read transactions' commits while another thread commits and grows the file: never damage")
    func walksRacingCommitsFindNoDamage() throws {
        try withTemporaryDirectory { path in
            let env = try Environment(path: path, options: .init(mapSize: 256 << 20, durable: false))
            let db = try env.openDatabase("test", create: true)
            let dataFile = path + "/data.mdb"
            let writing = Locked(true)
            let writerDone = DispatchSemaphore(value: 0)
            Thread {
                defer {
                    writing.withLock { $0 = false }
                    writerDone.signal()
                }
                // Small commits one after the other, each growing the file (the walks' read transactions keep
                // the pages it frees): a newer commit's trees reach pages past the last page of the commit being
                // walked. A bounded number, so that the file stays some tens of megabytes.
                for n in 0..<4_000 {
                    try? env.write { txn in try txn.put(db, key: key(n), value: Array(repeating: UInt8(n % 251), count: 300)) }
                }
            }.start()
            defer { if writing.withLock({ $0 }) { writerDone.wait() } }

            var consistent = 0, replaced = 0, walks = 0
            var damage: [String] = []
            while writing.withLock({ $0 }) {
                try env.read { txn in
                    switch try PageWalk.check(dataFile: dataFile, transactionID: try txn.transactionID) {
                    case .consistent: consistent += 1
                    case .commitReplaced: replaced += 1
                    case .damaged(let found): damage.append(found.message)
                    }
                }
                walks += 1
            }
            #expect(damage.isEmpty, "\(damage.count) of \(walks) walks reported damage, the first: \(damage.first ?? "")")
            // Once the writer is done, the walk of the file at rest goes through.
            writerDone.wait()
            let atRest = try env.read { txn in try PageWalk.check(dataFile: dataFile, transactionID: try txn.transactionID) }
            guard case .consistent = atRest else {
                Issue.record("the walk of the file at rest: \(atRest) (\(consistent) walks went through, \(replaced) found their commit replaced)")
                return
            }
        }
    }
}
