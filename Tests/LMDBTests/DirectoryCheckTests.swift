import Foundation
@testable import LMDB
import Testing

/// An environment's directory with a closed environment in it, a file outside it (a target for links), and the
/// file's bytes.
private struct PlantedDirectory {
    let root: String
    var environment: String { root + "/env" }
    var outside: String { root + "/outside.txt" }
    static let outsideText = Data("notes of the one who opens the environment\n".utf8)

    init(_ root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root + "/env", withIntermediateDirectories: false)
        try Self.outsideText.write(to: URL(fileURLWithPath: root + "/outside.txt"))
        let env = try Environment(path: root + "/env", options: .init(durable: false))
        let db = try env.openDatabase("test", create: true)
        try env.write { try $0.put(db, key: Array("k".utf8), value: Array("v".utf8)) }
    }

    /// Opens the environment and returns the error it throws, or `nil`.
    func openingError(readOnly: Bool) -> LMDBError? {
        do {
            _ = try Environment(path: environment, options: .init(readOnly: readOnly, durable: false))
            return nil
        } catch {
            return error
        }
    }
}

@Suite struct DirectoryCheckTests {
    @Test("a symbolic link, a hard link, a FIFO, a directory or another user's file in place of a file is refused before LMDB opens it",
          arguments: ["data.mdb", "lock.mdb"])
    func plantedFiles(_ name: String) throws {
        let plants: [(String, Environment.FileProblem.Reason, (String, String) throws -> Void)] = [
            ("symbolic link", .symbolicLink, { file, outside in
                try FileManager.default.removeItem(atPath: file)
                try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: outside)
            }),
            ("hard link", .hardLink(names: 2), { file, outside in
                try FileManager.default.removeItem(atPath: file)
                #expect(link(outside, file) == 0)
            }),
            ("FIFO", .wrongKind(.fifo), { file, _ in
                try FileManager.default.removeItem(atPath: file)
                #expect(mkfifo(file, 0o600) == 0)
            }),
            ("directory", .wrongKind(.directory), { file, _ in
                try FileManager.default.removeItem(atPath: file)
                try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
            }),
            ("another user's file", .ownedByAnotherUser(uid: 65534), { file, _ in
                #expect(chown(file, 65534, 65534) == 0)
            }),
        ]
        // Giving a file away (chown) needs root, which the tests run as.
        for (plant, reason, make) in plants where geteuid() == 0 || plant != "another user's file" {
            try withTemporaryDirectory { root in
                let directory = try PlantedDirectory(root)
                let file = directory.environment + "/" + name
                try make(file, directory.outside)
                for readOnly in [true, false] {
                    // Were the check to let a FIFO through, LMDB would block on it for ever: the tool's tests, which
                    // run it with a time limit, open those.
                    if plant != "FIFO" {
                        #expect(directory.openingError(readOnly: readOnly) == .untrustedFile, "\(name), \(plant)")
                    }
                    let problem = Environment.fileProblem(inDirectory: directory.environment, readOnly: readOnly)
                    #expect(problem?.reason == reason, "\(name), \(plant)")
                    #expect(problem?.path == file, "\(name), \(plant)")
                    #expect(problem?.isDirectory == false)
                }
                #expect(try Data(contentsOf: URL(fileURLWithPath: directory.outside)) == PlantedDirectory.outsideText,
                        "\(name), \(plant): the file outside is unchanged")
            }
        }
    }

    @Test("a directory of another user, or one that its group or others can write to, is refused")
    func directoryOwnershipAndMode() throws {
        try withTemporaryDirectory { root in
            let directory = try PlantedDirectory(root)
            for mode: mode_t in [0o720, 0o702, 0o777] {
                #expect(chmod(directory.environment, mode) == 0)
                #expect(directory.openingError(readOnly: true) == .untrustedFile)
                let problem = Environment.fileProblem(inDirectory: directory.environment, readOnly: false)
                #expect(problem?.reason == .writableByOthers(mode: UInt32(mode)))
                #expect(problem?.isDirectory == true)
            }
            #expect(chmod(directory.environment, 0o755) == 0)
            #expect(directory.openingError(readOnly: true) == nil, "read and search for others is fine")
            guard geteuid() == 0 else { return }
            #expect(chown(directory.environment, 65534, 65534) == 0)
            #expect(directory.openingError(readOnly: true) == .untrustedFile)
            #expect(Environment.fileProblem(inDirectory: directory.environment, readOnly: true)?.reason == .ownedByAnotherUser(uid: 65534))
        }
    }

    @Test("a directory given through a symbolic link is the directory it leads to, checked and opened")
    func symbolicLinkToTheDirectory() throws {
        try withTemporaryDirectory { root in
            let directory = try PlantedDirectory(root)
            try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: directory.environment)
            let env = try Environment(path: root + "/link", options: .init(readOnly: true))
            let db = try env.openDatabase("test", create: false)
            #expect(try env.read { try $0.get(db, key: Array("k".utf8)).map(Array.init) } == Array("v".utf8))
            #expect(env.path == root + "/link")
        }
    }

    @Test("a new environment is created in an empty directory; a missing one is still noSuchFile")
    func creation() throws {
        try withTemporaryDirectory { root in
            _ = try Environment(path: root, options: .init(durable: false))
            #expect(Environment.fileProblem(inDirectory: root, readOnly: false) == nil)
            #expect(Environment.fileProblem(inDirectory: root + "/missing", readOnly: true) == nil)
            #expect(throws: LMDBError.noSuchFile) { try Environment(path: root + "/missing") }
        }
    }

    @Test("after the open, a data file other than the one checked is refused as replaced")
    func replacedDataFile() throws {
        try withTemporaryDirectory { root in
            let directory = try PlantedDirectory(root)
            let checked = try #require(try DirectoryCheck.check(directory.environment, readOnly: true))
            let dataFile = directory.environment + "/data.mdb"
            // The checked file moves away and another takes its name.
            #expect(rename(dataFile, root + "/moved.mdb") == 0)
            try Data(repeating: 0, count: 8192).write(to: URL(fileURLWithPath: dataFile))
            #expect(chmod(dataFile, 0o600) == 0)
            for opened in [root + "/moved.mdb", dataFile] {
                let descriptor = open(opened, O_RDONLY)
                defer { close(descriptor) }
                #expect(throws: Environment.FileProblem(path: dataFile, reason: .replaced, isDirectory: false)) {
                    try DirectoryCheck.confirm(checked, dataFileDescriptor: descriptor, shownAs: directory.environment)
                }
            }
            // The checked one, back in place, is confirmed.
            #expect(rename(root + "/moved.mdb", dataFile) == 0)
            let descriptor = open(dataFile, O_RDONLY)
            defer { close(descriptor) }
            try DirectoryCheck.confirm(checked, dataFileDescriptor: descriptor, shownAs: directory.environment)
        }
    }

    @Test("missing access is found file by file, with what is needed")
    func accessWords() {
        #expect(Environment.FileProblem.Access([.read, .write]).description == "read and write")
        #expect(Environment.FileProblem.Access([.read, .write, .search]).description == "read, write and search")
        #expect(Environment.FileProblem.Access.search.description == "search")
        #expect(Environment.FileProblem.Access([.write, .search]).modeLetters == "wx")
    }
}
