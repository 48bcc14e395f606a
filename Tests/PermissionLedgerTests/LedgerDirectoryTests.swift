import Foundation
import LMDB
@testable import PermissionLedger
import Testing

@Suite struct LedgerDirectoryTests {
    @Test("an empty data.mdb is never turned into a new ledger: notALedger, one line naming it, nothing written",
          arguments: [false, true])
    func emptyDataFile(readOnly: Bool) async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            let dataFile = path + "/data.mdb"
            #expect(truncate(dataFile, 0) == 0)
            let error = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: readOnly, durable: false)) }
            #expect(error?.kind == .notALedger)
            #expect(error?.message.hasPrefix("\(dataFile): is empty; the ledger's data is lost or was never written; restore it from a backup") == true, "\(String(describing: error))")
            #expect(try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? Int == 0, "still empty")
            let verifyError = ledgerError { _ = try Ledger.verify(path: path) }
            #expect(verifyError?.message == error?.message)
        }
    }

    @Test("a lock.mdb without a data.mdb is refused by a writable open, and nothing is written")
    func lockFileAlone() async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            try FileManager.default.removeItem(atPath: path + "/data.mdb")
            let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            #expect(before == ["data-keys", "ledger.key", "lock.mdb"])
            let error = ledgerError { _ = try Ledger(path: path, options: .init(durable: false)) }
            #expect(error?.kind == .notALedger)
            #expect(error?.message.hasPrefix("\(path): holds a lock.mdb but no data.mdb; the ledger's data is lost") == true, "\(String(describing: error))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
        }
    }

    @Test("a writable open of an absent or empty directory creates the ledger: directory 0700, files 0600")
    func creation() async throws {
        try await withTemporaryDirectory { directory async throws in
            let empty = directory + "/empty"
            #expect(mkdir(empty, 0o755) == 0)
            for path in [directory + "/absent", empty] {
                _ = try Ledger(path: path, options: .init(durable: false))
                let mode = { (file: String) in
                    ((try? FileManager.default.attributesOfItem(atPath: file))?[.posixPermissions] as? Int).map { $0 & 0o777 }
                }
                #expect(mode(path) == (path == empty ? 0o755 : 0o700))
                #expect(mode(path + "/data.mdb") == 0o600)
                #expect(mode(path + "/lock.mdb") == 0o600)
            }
        }
    }

    @Test("a symbolic link in place of lock.mdb is refused with one line naming it, and its target is unchanged",
          arguments: [false, true])
    func symbolicLink(readOnly: Bool) async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            let victim = path + ".victim"
            let text = Data("not to be overwritten\n".utf8)
            try text.write(to: URL(fileURLWithPath: victim))
            try FileManager.default.removeItem(atPath: path + "/lock.mdb")
            try FileManager.default.createSymbolicLink(atPath: path + "/lock.mdb", withDestinationPath: victim)
            let error = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: readOnly, durable: false)) }
            #expect(error?.kind == .notALedger)
            #expect(error?.message == "\(path)/lock.mdb: is a symbolic link; a ledger's files must be regular files owned by you; refusing to open it")
            #expect(try Data(contentsOf: URL(fileURLWithPath: victim)) == text)
        }
    }

    @Test("a symbolic link that leads nowhere is not made into a ledger, nor is its target created")
    func danglingSymbolicLink() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory + "/elsewhere")
            for readOnly in [false, true] {
                let error = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: readOnly, durable: false)) }
                #expect(error?.kind == .notALedger)
                #expect(error?.message == "\(path): is a symbolic link to \(directory)/elsewhere, which does not exist; give the ledger's directory, or create the one the link names")
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/elsewhere"))
        }
    }

    @Test("a directory that its group can write to is refused with what to run")
    func groupWritableDirectory() async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            #expect(chmod(path, 0o770) == 0)
            let error = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: true)) }
            #expect(error?.kind == .notALedger)
            #expect(error?.message == "\(path): can be written by its group (mode 770), who could replace the ledger's files; refusing to open it; run chmod go-w \(path)")
        }
    }

    /// Root, whom the tests run as, has every access: the words for missing access are checked on the problems
    /// the directory check reports.
    @Test("missing access is said with the file, what it needs and why, and the chmod that grants it")
    func accessDeniedWords() {
        func words(_ path: String, _ needs: Environment.FileProblem.Access, directory: Bool = false, readOnly: Bool = true) -> String {
            let problem = Environment.FileProblem(path: path, reason: .accessDenied(needs: needs), isDirectory: directory)
            let error = LedgerDirectory.refusal(problem, readOnly: readOnly)
            #expect(error.kind == .storage)
            return error.message
        }
        #expect(words("/l/lock.mdb", [.read, .write])
            == "/l/lock.mdb: needs read and write access (it is LMDB's reader table, which readers write too); grant it with chmod u+rw /l/lock.mdb")
        #expect(words("/l/data.mdb", .read) == "/l/data.mdb: needs read access to read the ledger; grant it with chmod u+r /l/data.mdb")
        #expect(words("/l/data.mdb", [.read, .write], readOnly: false)
            == "/l/data.mdb: needs read and write access (appends write to it); grant it with chmod u+rw /l/data.mdb")
        #expect(words("/l", .search, directory: true) == "/l: needs search access to open the ledger's files; grant it with chmod u+x /l")
        #expect(words("/l", [.write, .search], directory: true)
            == "/l: needs write and search access to create the ledger's files (readers too create lock.mdb, LMDB's reader table, when it is missing); grant it with chmod u+wx /l")
    }

    @Test("every refusal is one line that names the file")
    func oneLine() {
        let reasons: [Environment.FileProblem.Reason] = [
            .symbolicLink, .hardLink(names: 3), .wrongKind(.fifo), .ownedByAnotherUser(uid: 65534),
            .writableByOthers(mode: 0o777), .accessDenied(needs: [.read, .write]), .replaced, .unexamined(errno: EIO),
        ]
        for reason in reasons {
            for directory in [false, true] {
                let path = directory ? "/l" : "/l/lock.mdb"
                let message = LedgerDirectory.refusal(.init(path: path, reason: reason, isDirectory: directory), readOnly: true).message
                #expect(message.hasPrefix(path + ": "), "\(message)")
                #expect(!message.contains("\n"), "\(message)")
            }
        }
    }
}
