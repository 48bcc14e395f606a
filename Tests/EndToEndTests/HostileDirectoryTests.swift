import Foundation
import Testing

/// Stands for a new directory in a command's arguments (`backup --out DIR`), replaced by a path in the sandbox.
private let newDirectory = "<new directory>"

/// Every command that takes a ledger, reading and writing, with arguments that would make it read or write.
private let ledgerCommands: [[String]] = queryCommands + [
    ["export"],
    ["backup", "--out", newDirectory],
    ["import", Fixture.path("decline.jsonl")],
    ["rebuild"],
]

/// What a hostile party can plant in a ledger's directory before handing it over.
enum PlantedObject: String, CaseIterable, Sendable, CustomStringConvertible {
    case lockSymbolicLink, dataSymbolicLink, lockHardLink, dataHardLink, lockFIFO, dataFIFO, lockDirectory, dataDirectory
    case lockOfAnotherUser, dataOfAnotherUser, directoryOfAnotherUser, groupWritableDirectory, emptyDataFile, lockFileAlone

    var description: String { rawValue }

    /// The file it replaces.
    private var file: String { rawValue.hasPrefix("lock") ? "lock.mdb" : "data.mdb" }

    /// Plants it in the ledger `ledger`; links lead to `outside`, a directory beside the ledger.
    func plant(in ledger: String, outside: String) throws {
        let fm = FileManager.default
        let file = ledger + "/" + self.file
        // Links lead to the auditor's own notes for the lock file, and to a sound data file for the data file.
        let target = self.file == "lock.mdb" ? outside + "/notes.txt" : outside + "/data.mdb"
        if self.file == "data.mdb", [.dataSymbolicLink, .dataHardLink].contains(self) {
            try fm.moveItem(atPath: file, toPath: target)
        }
        switch self {
        case .lockSymbolicLink, .dataSymbolicLink:
            try? fm.removeItem(atPath: file)
            try fm.createSymbolicLink(atPath: file, withDestinationPath: target)
        case .lockHardLink, .dataHardLink:
            try? fm.removeItem(atPath: file)
            try #require(link(target, file) == 0)
        case .lockFIFO, .dataFIFO:
            try fm.removeItem(atPath: file)
            try #require(mkfifo(file, 0o600) == 0)
        case .lockDirectory, .dataDirectory:
            try fm.removeItem(atPath: file)
            try fm.createDirectory(atPath: file, withIntermediateDirectories: false)
        case .lockOfAnotherUser, .dataOfAnotherUser:
            try #require(chown(file, 65534, 65534) == 0)
        case .directoryOfAnotherUser:
            try #require(chown(ledger, 65534, 65534) == 0)
        case .groupWritableDirectory:
            try #require(chmod(ledger, 0o770) == 0)
        case .emptyDataFile:
            try #require(truncate(file, 0) == 0)
        case .lockFileAlone:
            try fm.removeItem(atPath: ledger + "/data.mdb")
        }
    }

    /// What the one line on standard error must say, after the path: for `command`.
    func expectedError(ledger: String, command: String) -> String {
        let filesRule = "a ledger's files must be regular files owned by you; refusing to open it"
        let path = ledger + "/" + file
        return switch self {
        case .lockSymbolicLink, .dataSymbolicLink: "\(path): is a symbolic link; \(filesRule)"
        case .lockHardLink, .dataHardLink: "\(path): is a hard link (one of 2 names of one file, which may be outside the directory); \(filesRule)"
        case .lockFIFO, .dataFIFO: "\(path): is a FIFO (a named pipe); \(filesRule)"
        case .lockDirectory, .dataDirectory: "\(path): is a directory; \(filesRule)"
        case .lockOfAnotherUser, .dataOfAnotherUser: "\(path): is owned by another user (uid 65534); \(filesRule)"
        case .directoryOfAnotherUser:
            "\(ledger): is owned by another user (uid 65534); a ledger's directory must be yours and writable by you alone, so that no one else can replace its files; refusing to open it"
        case .groupWritableDirectory:
            "\(ledger): can be written by its group (mode 770), who could replace the ledger's files; refusing to open it; run chmod go-w \(ledger)"
        case .emptyDataFile:
            "\(path): is empty; the ledger's data is lost or was never written; restore it from a backup (a new ledger is never started over a lost one)"
        case .lockFileAlone:
            ["import", "rebuild"].contains(command)
                ? "\(ledger): holds a lock.mdb but no data.mdb; the ledger's data is lost or was moved; restore data.mdb from a backup (a new ledger is never started over a lost one)"
                : "\(ledger): not a ledger (no data.mdb in the directory)"
        }
    }
}

/// Everything that can be seen of the files in a directory, its subdirectories and the directory itself, without
/// opening anything but regular files: kind, mode, owner, names, size, times, inode, bytes, link target.
struct DirectorySnapshot: Equatable, CustomStringConvertible {
    var entries: [String: String]

    init(_ directory: String) throws {
        entries = [:]
        try record(directory, as: ".")
    }

    private mutating func record(_ path: String, as name: String) throws {
        var info = stat()
        try #require(lstat(path, &info) == 0, "lstat \(path)")
        var entry = "mode \(String(info.st_mode, radix: 8)) uid \(info.st_uid) links \(info.st_nlink) inode \(info.st_ino)"
            + " size \(info.st_size) mtime \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) ctime \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            // FNV-1a of the bytes.
            let digest = try Data(contentsOf: URL(fileURLWithPath: path))
                .reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            entry += " bytes \(String(digest, radix: 16))"
        case S_IFLNK:
            entry += " → \(try FileManager.default.destinationOfSymbolicLink(atPath: path))"
        case S_IFDIR:
            for child in try FileManager.default.contentsOfDirectory(atPath: path) {
                try record(path + "/" + child, as: name + "/" + child)
            }
        default:
            break
        }
        entries[name] = entry
    }

    var description: String { entries.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n") }
}

@Suite("a hostile ledger directory is refused before anything in it is opened", .timeLimit(.minutes(10)))
struct HostileDirectoryTests {
    @Test("every command that takes a ledger exits 3 with one line naming the planted file, and changes nothing",
          arguments: PlantedObject.allCases)
    func plantedObject(_ planted: PlantedObject) throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let outside = sandbox.path("outside")
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
            try Data("the auditor's notes\n".utf8).write(to: URL(fileURLWithPath: outside + "/notes.txt"))
            try Data("a file beside the ledger\n".utf8).write(to: URL(fileURLWithPath: sandbox.path("sibling.txt")))
            try planted.plant(in: ledger, outside: outside)
            let before = try DirectorySnapshot(sandbox.root.path)

            for command in ledgerCommands {
                let backup = sandbox.path("backup")
                let arguments = command.map { $0 == newDirectory ? backup : $0 } + ["--ledger", ledger]
                // A safety net against a hang on a FIFO, not a timing assertion.
                let result = try sandbox.run(arguments, killAfter: 120)
                #expect(!result.timedOut && !result.crashed, "\(planted): \(result)")
                #expect(result.status == 3, "\(planted): \(result)")
                #expect(result.errorLines == [planted.expectedError(ledger: ledger, command: command[0])], "\(planted): \(result)")
                #expect(result.stdout.isEmpty, "\(planted): \(result)")
                #expect(!FileManager.default.fileExists(atPath: backup), "\(planted): no backup")
            }
            // The runs' captured output is in ./io; verify makes (and removes) its progress page in ./tmp, whose
            // times change, and anything left there would show as an entry of its own.
            let after = try DirectorySnapshot(sandbox.root.path)
            let changed = Set(before.entries.keys).union(after.entries.keys).sorted()
                .filter { before.entries[$0] != after.entries[$0] && !$0.hasPrefix("./io") && $0 != "./tmp" }
            #expect(changed.isEmpty, "\(planted): changed \(changed.map { "\($0): \(before.entries[$0] ?? "-") → \(after.entries[$0] ?? "-")" })")
        }
    }

    @Test("a FIFO in place of a key file, the key store or a signing key is refused with one line, not waited on",
          arguments: ["ledger.key", "data-keys", "--key-file", "--signing-key"])
    func fifoInPlaceOfAKeyFile(_ place: String) throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let fifo = place.hasPrefix("--") ? sandbox.path("planted") : ledger + "/" + place
            if !place.hasPrefix("--") { try FileManager.default.removeItem(atPath: fifo) }
            try #require(mkfifo(fifo, 0o600) == 0)
            let commands: [[String]] = place == "--signing-key"
                ? [["checkpoint", "--signing-key", fifo]]
                : [["questions"], ["stats"], ["import", Fixture.path("decline.jsonl")]].map { place == "--key-file" ? $0 + ["--key-file", fifo] : $0 }
            for command in commands {
                // A safety net against the hang itself, not a timing assertion.
                let result = try sandbox.run(command + ["--ledger", ledger], killAfter: 120)
                #expect(!result.timedOut && result.status == 3, "\(place) \(command[0]): \(result)")
                #expect(result.errorLines.count == 1 && result.errorLines.first?.contains("is not a regular file") == true, "\(place) \(command[0]): \(result)")
            }
        }
    }

    /// A key store with no key check and every slot destroyed is looked at only as far as the slots the ledger used,
    /// not slot by slot through a planted size of 64 GiB (sparse, taking no room).
    @Test("a key store planted with no key check and a huge size is not read slot by slot")
    func hugeKeyStoreWithoutKeyCheck() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let path = ledger + "/data-keys"
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            // The key check (bytes 24 to 52) and every slot, zeroed.
            bytes.replaceSubrange(24..<52, with: [UInt8](repeating: 0, count: 28))
            bytes.replaceSubrange(64..<bytes.count, with: [UInt8](repeating: 0, count: bytes.count - 64))
            try bytes.write(to: URL(fileURLWithPath: path))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 64 + 64 << 30)
            try handle.close()
            for command in [["stats"], ["questions"]] {
                // A safety net against the hang itself, not a timing assertion.
                let result = try sandbox.run(command + ["--ledger", ledger], killAfter: 120)
                #expect(!result.timedOut && !result.crashed, "\(command[0]): \(result)")
                #expect(result.status == 0 || (result.status == 3 && result.errorLines.count == 1), "\(command[0]): \(result)")
            }
        }
    }

    @Test("a ledger given through a symbolic link to its directory is read and written as the directory itself")
    func symbolicLinkToTheLedger() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let link = sandbox.path("link")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: ledger)
            for command in [["verify"], ["questions"], ["export"], ["import", Fixture.path("decline.jsonl")]] {
                let result = try sandbox.run(command + ["--ledger", link])
                #expect(result.status == 0, "\(result)")
            }
            #expect(try sandbox.export(link) == sandbox.export(ledger))
        }
    }
}

/// Whether the tool can be run as the user `nobody` (uid 65534), who has no access that root has not granted:
/// root runs the tests, and bypasses permission bits.
private let canRunAsNobody = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
private let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

@Suite("missing access to a ledger is said file by file", .enabled(if: canRunAsNobody), .timeLimit(.minutes(10)))
struct LedgerAccessTests {
    /// A ledger owned by nobody, with one permission taken away, and what a command run as nobody must say.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var command: [String]
        /// The file (relative to the ledger: "" for the directory) and its new mode.
        var file: String
        var mode: mode_t
        /// The expected line, with `{L}` for the ledger's path.
        var expected: String

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a lock.mdb that is not writable", command: ["questions"], file: "lock.mdb", mode: 0o400,
             expected: "{L}/lock.mdb: needs read and write access (it is LMDB's reader table, which readers write too); grant it with chmod u+rw {L}/lock.mdb"),
        Case(name: "a data.mdb that is not readable", command: ["verify"], file: "data.mdb", mode: 0o200,
             expected: "{L}/data.mdb: needs read access to read the ledger; grant it with chmod u+r {L}/data.mdb"),
        Case(name: "a data.mdb that is not writable, for import", command: ["import", Fixture.path("decline.jsonl")], file: "data.mdb", mode: 0o400,
             expected: "{L}/data.mdb: needs read and write access (appends write to it); grant it with chmod u+rw {L}/data.mdb"),
        Case(name: "a directory of mode 000", command: ["questions"], file: "", mode: 0o000,
             expected: "{L}: needs search access to open the ledger's files; grant it with chmod u+x {L}"),
    ]

    @Test("a command run by the ledger's owner without the access it needs exits 3 with one line saying what to grant",
          arguments: cases)
    func missingAccess(_ testCase: Case) throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            try ownedByNobody(sandbox, ledger)
            let file = testCase.file.isEmpty ? ledger : ledger + "/" + testCase.file
            try #require(chmod(file, testCase.mode) == 0)
            let result = try sandbox.run(testCase.command + ["--ledger", ledger], launcher: asNobody, killAfter: 120)
            #expect(result.status == 3, "\(result)")
            #expect(result.errorLines == [testCase.expected.replacingOccurrences(of: "{L}", with: ledger)], "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }

    @Test("a reader of a ledger whose lock.mdb is missing needs to write the directory, where LMDB creates it")
    func missingLockFile() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            try FileManager.default.removeItem(atPath: ledger + "/lock.mdb")
            try ownedByNobody(sandbox, ledger, files: ["", "/data.mdb"])
            try #require(chmod(ledger, 0o500) == 0)
            let result = try sandbox.run(["questions", "--ledger", ledger], launcher: asNobody, killAfter: 120)
            #expect(result.status == 3, "\(result)")
            #expect(result.errorLines == ["\(ledger): needs write and search access to create the ledger's files (readers too create lock.mdb, LMDB's reader table, when it is missing); grant it with chmod u+wx \(ledger)"], "\(result)")
        }
    }

    @Test("the owner with the access the ledger needs reads and writes it as before")
    func ownerReadsAndWrites() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            try ownedByNobody(sandbox, ledger)
            for command in [["verify"], ["questions"], ["import", Fixture.path("decline.jsonl")]] {
                let result = try sandbox.run(command + ["--ledger", ledger], launcher: asNobody, killAfter: 120)
                #expect(result.status == 0, "\(result)")
            }
        }
    }

    /// Gives the ledger's directory and files to nobody, and lets nobody write the tool's TMPDIR (where `verify`
    /// keeps its progress page).
    private func ownedByNobody(_ sandbox: Sandbox, _ ledger: String, files: [String] = ["", "/data.mdb", "/lock.mdb", "/data-keys", "/ledger.key"]) throws {
        for file in files { try #require(chown(ledger + file, 65534, 65534) == 0) }
        try #require(chmod(sandbox.temporaryDirectory.path, 0o1777) == 0)
    }
}
