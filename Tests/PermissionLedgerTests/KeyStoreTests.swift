import Crypto
import Foundation
@testable import PermissionLedger
import Testing

/// The ledger's key file and its store of wrapped data keys.
@Suite struct KeyStoreTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    static func bytes(_ path: String) -> [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }

    static func keyBytes(_ key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    @Test func theKeyFileIsMadeOwnerOnlyAndReadBack() async throws {
        try await withTemporaryDirectory { directory in
            let location = LedgerKey.Location.of(ledgerPath: directory, given: nil, environment: [:])
            #expect(location.path == directory + "/ledger.key")
            #expect(location.origin == .ledgerDirectory)
            let made = try LedgerKey.readOrCreate(at: location, secrets: .system)
            #expect(Self.mode(location.path) == 0o600)
            let read = try #require(try LedgerKey.read(at: location))
            #expect(Self.keyBytes(read.key) == Self.keyBytes(made.key))
            // Made again: the existing key, not a new one.
            #expect(Self.keyBytes(try LedgerKey.readOrCreate(at: location, secrets: .system).key) == Self.keyBytes(made.key))
            #expect(String(decoding: Self.bytes(location.path), as: UTF8.self).hasPrefix("permission-ledger-key-1 "))
        }
    }

    @Test func theKeyFileIsFoundAsNamed() {
        let environment = [LedgerKey.environmentVariable: "/keys/from-environment"]
        #expect(LedgerKey.Location.of(ledgerPath: "/l", given: "/keys/given", environment: environment) == .init(path: "/keys/given", origin: .given))
        #expect(LedgerKey.Location.of(ledgerPath: "/l", given: nil, environment: environment) == .init(path: "/keys/from-environment", origin: .environment))
        #expect(LedgerKey.Location.of(ledgerPath: "/l", given: nil, environment: [LedgerKey.environmentVariable: ""]).origin == .ledgerDirectory)
    }

    @Test func aKeyFileOthersCanReadOrThatIsNoKeyIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let location = LedgerKey.Location(path: directory + "/k", origin: .given)
            _ = try LedgerKey.readOrCreate(at: location, secrets: .system)
            chmod(location.path, 0o644)
            let open = ledgerError { _ = try LedgerKey.read(at: location) }
            #expect(open?.message.contains("chmod 600 \(location.path)") == true, "\(String(describing: open))")
            chmod(location.path, 0o600)
            symlink(location.path, directory + "/link")
            #expect(ledgerError { _ = try LedgerKey.read(at: .init(path: directory + "/link", origin: .given)) }?.message.contains("symbolic link") == true)
            FileManager.default.createFile(atPath: directory + "/garbage", contents: Data("not a key\n".utf8), attributes: [.posixPermissions: 0o600])
            #expect(ledgerError { _ = try LedgerKey.read(at: .init(path: directory + "/garbage", origin: .given)) }?.message.contains("not a ledger key file") == true)
            #expect(try LedgerKey.read(at: .init(path: directory + "/absent", origin: .given)) == nil)
        }
    }

    @Test func keysComeBackAfterReopening() async throws {
        try await withTemporaryDirectory { directory in
            let ledgerKey = try LedgerKey.readOrCreate(at: .of(ledgerPath: directory, given: nil, environment: [:]), secrets: .system)
            let keys = (0..<5).map { _ in SymmetricKey(size: .bits256) }
            var slots: [UInt64] = []
            do {
                let store = try #require(try KeyStore.open(directory: directory, ledgerKey: ledgerKey, writable: true, secrets: .system))
                for key in keys { slots.append(try store.add(key, secrets: .system)) }
                try store.sync()
                #expect(Self.mode(store.path) == 0o600)
            }
            #expect(slots == [0, 1, 2, 3, 4])
            let store = try #require(try KeyStore.open(directory: directory, ledgerKey: ledgerKey, writable: false, secrets: .system))
            for (slot, key) in zip(slots, keys) {
                #expect(try store.key(slot: slot).map(Self.keyBytes) == Self.keyBytes(key))
            }
            #expect(ledgerError { _ = try store.key(slot: 5) }?.kind == .damaged)
        }
    }

    @Test func aDestroyedKeyIsGoneFromTheFile() async throws {
        try await withTemporaryDirectory { directory in
            let ledgerKey = try LedgerKey.readOrCreate(at: .of(ledgerPath: directory, given: nil, environment: [:]), secrets: .system)
            let store = try #require(try KeyStore.open(directory: directory, ledgerKey: ledgerKey, writable: true, secrets: .system))
            let kept = SymmetricKey(size: .bits256), destroyed = SymmetricKey(size: .bits256)
            _ = try store.add(kept, secrets: .system)
            let slot = try store.add(destroyed, secrets: .system)
            try store.sync()
            let wrapped = Array(Self.bytes(store.path)[(64 + 64 * Int(slot))..<(64 + 64 * Int(slot) + 60)])
            #expect(Self.bytes(store.path).contains(subsequence: wrapped))
            try store.destroy([slot])
            #expect(try store.key(slot: slot) == nil)
            #expect(try store.key(slot: 0).map(Self.keyBytes) == Self.keyBytes(kept))
            // Neither the key nor its wrapped form is anywhere in the directory; nor was the key ever stored bare.
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let contents = Self.bytes(directory + "/" + name)
                #expect(!contents.contains(subsequence: wrapped), "\(name)")
                #expect(!contents.contains(subsequence: Self.keyBytes(destroyed)), "\(name)")
                #expect(!contents.contains(subsequence: Self.keyBytes(kept)), "\(name)")
            }
            try store.destroy([slot])
            #expect(store.slotCount == 2)
        }
    }

    @Test func aStoreOpensOnlyWithItsLedgersKeyAndSlotsStayInPlace() async throws {
        try await withTemporaryDirectory { directory in
            let ledgerKey = try LedgerKey.readOrCreate(at: .of(ledgerPath: directory, given: nil, environment: [:]), secrets: .system)
            let store = try #require(try KeyStore.open(directory: directory, ledgerKey: ledgerKey, writable: true, secrets: .system))
            _ = try store.add(SymmetricKey(size: .bits256), secrets: .system)
            _ = try store.add(SymmetricKey(size: .bits256), secrets: .system)
            try store.sync()
            let other = try LedgerKey.readOrCreate(at: .init(path: directory + "/other.key", origin: .given), secrets: .system)
            let foreign = try #require(try KeyStore.open(directory: directory, ledgerKey: other, writable: false, secrets: .system))
            #expect(ledgerError { _ = try foreign.key(slot: 0) }?.kind == .damaged)
            // A slot copied over another does not open there.
            var contents = Self.bytes(store.path)
            contents.replaceSubrange(128..<192, with: contents[64..<128])
            try Data(contents).write(to: URL(fileURLWithPath: store.path))
            let copied = try #require(try KeyStore.open(directory: directory, ledgerKey: ledgerKey, writable: false, secrets: .system))
            #expect(throws: Never.self) { _ = try copied.key(slot: 0) }
            #expect(ledgerError { _ = try copied.key(slot: 1) }?.kind == .damaged)
        }
    }

    /// A writer never makes a key store anew, nor adds keys to one cut short, where the ledger holds keys: the
    /// new keys would take the slots its entries name, and what was sealed would never open again. It refuses,
    /// and leaves the directory as it was, so that the store can be restored from a backup.
    @Test(arguments: ["missing", "cut short"]) func aWriterRefusesAKeyStoreLostOrCutShort(_ damage: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded())
            try await ledger.importFixture("decline.jsonl")
            await ledger.close()
            let store = path + "/" + KeyStore.fileName
            let saved = try Data(contentsOf: URL(fileURLWithPath: store))
            if damage == "missing" {
                try FileManager.default.removeItem(atPath: store)
            } else {
                #expect(truncate(store, off_t(saved.count - KeyStore.slotSize)) == 0)
            }
            let left = FileManager.default.fileExists(atPath: store) ? try Data(contentsOf: URL(fileURLWithPath: store)) : nil
            let error = ledgerError { _ = try Ledger(path: path, options: .seeded()) }
            #expect(error?.kind == .damaged, "\(String(describing: error))")
            #expect(error?.message.contains(damage == "missing" ? "is missing" : "cut short") == true, "\(String(describing: error))")
            let after = FileManager.default.fileExists(atPath: store) ? try Data(contentsOf: URL(fileURLWithPath: store)) : nil
            #expect(after == left, "the store is left as it was")
            if damage == "missing" {
                // A reader says what is missing: the key store, not the key, which is there.
                let reader = try Ledger(path: path, options: .init(readOnly: true))
                let read = ledgerError { _ = try reader.read { try $0.questions() } }
                #expect(read?.kind == .damaged && read?.message.contains("key store \(store) is missing") == true, "\(String(describing: read))")
                await reader.close()
            }
            // Restored, the ledger opens and reads as before.
            try saved.write(to: URL(fileURLWithPath: store))
            #expect(chmod(store, 0o600) == 0)
            let restored = try Ledger(path: path, options: .seeded())
            #expect(try await restored.questions().count > 0)
        }
    }

    static func names(_ path: String) -> nlink_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_nlink : 0
    }

    /// A key file or key store is made under a temporary name, then linked to its own: a process killed between the
    /// link and the removal of the temporary name leaves the file with two. That one second name is accepted, and a
    /// writer removes it; any other is refused, as a file that may be read or written elsewhere.
    @Test func theTemporaryNameACreationKilledMidwayLeavesIsTidiedAndNoOtherSecondName() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded())
            try await ledger.importFixture("decline.jsonl")
            let questions = try await ledger.questions()
            await ledger.close()
            let files = [path + "/" + LedgerKey.defaultFileName, path + "/" + KeyStore.fileName]
            let leftovers = files.map { $0 + ".tmp-4194301" }
            for (file, leftover) in zip(files, leftovers) { #expect(link(file, leftover) == 0) }

            // A reader opens and reads, and writes nothing: the temporary names stay.
            let reader = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try await reader.questions() == questions)
            await reader.close()
            for leftover in leftovers { #expect(FileManager.default.fileExists(atPath: leftover), "\(leftover)") }

            // A writer opens and removes them.
            let writer = try Ledger(path: path, options: .seeded())
            #expect(try await writer.questions() == questions)
            await writer.close()
            for leftover in leftovers { #expect(!FileManager.default.fileExists(atPath: leftover), "\(leftover)") }
            for file in files { #expect(Self.names(file) == 1, "\(file)") }

            // Any other second name is refused, by a reader and a writer, and left where it is; also beside a
            // temporary name of another file.
            let elsewhere = directory + "/elsewhere"
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
            for file in files {
                let name = String(file.split(separator: "/").last!)
                #expect(FileManager.default.createFile(atPath: file + ".tmp-7", contents: Data("another file".utf8)))
                for other in [path + "/copy", path + "/" + name + ".tmp-12x", path + "/" + name + ".tmp-", elsewhere + "/" + name + ".tmp-1"] {
                    #expect(link(file, other) == 0)
                    for options in [Ledger.Options(readOnly: true), .seeded()] {
                        let error = ledgerError {
                            let opened = try Ledger(path: path, options: options)
                            _ = try opened.read { try $0.questions() }
                        }
                        #expect(error?.message.contains("\(file): has 2 names (a hard link)") == true, "\(other): \(String(describing: error))")
                    }
                    #expect(Self.names(other) == 2, "\(other)")
                    #expect(unlink(other) == 0)
                }
                // The temporary name with a third name beside it is refused too.
                #expect(link(file, file + ".tmp-4194301") == 0 && link(file, path + "/copy") == 0)
                let three = ledgerError { _ = try Ledger(path: path, options: .seeded()) }
                #expect(three?.message.contains("\(file): has 3 names (a hard link)") == true, "\(String(describing: three))")
                #expect(unlink(file + ".tmp-4194301") == 0 && unlink(path + "/copy") == 0)
            }
            #expect(try await Ledger(path: path, options: .seeded()).questions() == questions)
        }
    }

    /// The key file of a ledger whose creation was killed before its format was recorded, and a signing key, are
    /// tidied by whoever next makes or uses them.
    @Test func theTemporaryNameOfANewLedgersKeyAndOfASigningKeyIsTidiedToo() async throws {
        try await withTemporaryDirectory { directory in
            let location = LedgerKey.Location(path: directory + "/k", origin: .given)
            let made = try LedgerKey.readOrCreate(at: location, secrets: .system)
            #expect(link(location.path, location.path + ".tmp-77") == 0)
            #expect(try LedgerKey.read(at: location).map { Self.keyBytes($0.key) } == Self.keyBytes(made.key))
            #expect(Self.names(location.path) == 2, "a reader leaves it")
            #expect(Self.keyBytes(try LedgerKey.readOrCreate(at: location, secrets: .system).key) == Self.keyBytes(made.key))
            #expect(Self.names(location.path) == 1 && Self.names(location.path + ".tmp-77") == 0)

            let signingKey = directory + "/signing.key"
            _ = try CheckpointSigner.create(keyFile: signingKey, origin: "example.org/ledger")
            #expect(link(signingKey, signingKey + ".tmp-78") == 0)
            _ = try CheckpointSigner(keyFile: signingKey)
            #expect(Self.names(signingKey) == 1 && Self.names(signingKey + ".tmp-78") == 0)
        }
    }

    /// A writer given another ledger's key is refused, also once the keys it would have been checked against are
    /// destroyed: the keys it made would wrap under the wrong key, and the ledger would not read with either. A store
    /// made without a key check (an earlier build's) is checked by its first key not destroyed, and gets one.
    @Test(arguments: ["with its key check", "made without one"]) func aWriterGivenAnotherLedgersKeyIsRefusedWhateverWasErased(_ store: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let wrongKey = directory + "/other.key"
            _ = try LedgerKey.readOrCreate(at: .init(path: wrongKey, origin: .given), secrets: .system)
            var options = Ledger.Options.seeded()
            var wrong = options
            wrong.keyFile = wrongKey
            let keyStore = path + "/" + KeyStore.fileName
            func withoutKeyCheck() throws {
                guard store == "made without one" else { return }
                var contents = Self.bytes(keyStore)
                contents.replaceSubrange(24..<64, with: [UInt8](repeating: 0, count: 40))
                try Data(contents).write(to: URL(fileURLWithPath: keyStore))
            }
            do {
                let ledger = try Ledger(path: path, options: options)
                try await ledger.importFixture("family-day.jsonl")
                // The keys of the subject of the first event, the store's first slot among them, are destroyed.
                let first = try #require(KeyErasureTests.event(ledger, seq: 1)).subject
                try await ledger.append([try KeyErasureTests.erasure("erase-1", subject: first, at: "2026-11-21T10:00:00Z")])
                #expect(try ledger.tables.keyRing!.store.key(slot: 0) == nil)
                await ledger.close()
            }
            try withoutKeyCheck()
            let refused = ledgerError { _ = try Ledger(path: path, options: wrong) }
            #expect(refused?.kind == .damaged && refused?.message.contains("not this ledger's") == true, "\(String(describing: refused))")
            // With its own key, it reads and writes as before; a store without a key check gets one.
            let before = Self.bytes(keyStore)
            do {
                let ledger = try Ledger(path: path, options: options)
                #expect(try await ledger.questions().count > 0)
                await ledger.close()
            }
            #expect(Array(Self.bytes(keyStore)[24..<52]) != [UInt8](repeating: 0, count: 28))
            #expect(store == "made without one" || Self.bytes(keyStore) == before, "a key check is written once")

            // Every key destroyed: the key check still tells.
            if store == "with its key check" {
                let ledger = try Ledger(path: path, options: options)
                let first = try #require(KeyErasureTests.event(ledger, seq: 1)).subject
                for subject in try ledger.read({ try $0.subjects() }) where subject != first {
                    try await ledger.append([try KeyErasureTests.erasure("erase-\(subject)", subject: subject, at: "2026-11-21T10:00:00Z")])
                }
                let ring = try #require(ledger.tables.keyRing)
                #expect(try (0..<ring.store.slotCount).allSatisfy { try ring.store.key(slot: $0) == nil })
                await ledger.close()
                #expect(ledgerError { _ = try Ledger(path: path, options: wrong) }?.kind == .damaged)
            }
            options.readOnly = true
            #expect(throws: Never.self) { _ = try Ledger(path: path, options: options) }
        }
    }

    /// `verify` needs no key, but reads the key store's header: a ledger that keeps keys in a store that is
    /// missing, cut short, not a key store, a link or open to others is damaged, whatever its log says.
    @Test(arguments: ["missing", "cut short", "not a key store", "a symbolic link", "readable by others"])
    func verifyReportsAKeyStoreLostOrPlanted(_ damage: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            let ledger = try Ledger(path: path, options: .seeded())
            try await ledger.importFixture("decline.jsonl")
            await ledger.close()
            #expect(try await Ledger.verify(path: path).isIntact)
            let store = path + "/" + KeyStore.fileName
            let saved = try Data(contentsOf: URL(fileURLWithPath: store))
            try FileManager.default.removeItem(atPath: store)
            switch damage {
            case "cut short": try saved.prefix(saved.count - KeyStore.slotSize).write(to: URL(fileURLWithPath: store))
            case "not a key store": try Data(repeating: 7, count: saved.count).write(to: URL(fileURLWithPath: store))
            case "a symbolic link":
                try saved.write(to: URL(fileURLWithPath: directory + "/elsewhere"))
                try FileManager.default.createSymbolicLink(atPath: store, withDestinationPath: directory + "/elsewhere")
            case "readable by others": try saved.write(to: URL(fileURLWithPath: store))
            default: break
            }
            if damage != "missing" && damage != "a symbolic link" { #expect(chmod(store, damage == "readable by others" ? 0o644 : 0o600) == 0) }
            let report = try await Ledger.verify(path: path)
            let expected = ["missing": "is missing", "cut short": "cut short", "not a key store": "is not a ledger's key store",
                            "a symbolic link": "symbolic link", "readable by others": "mode 644"][damage]!
            #expect(!report.isIntact && report.damagedSeq == 1, "\(report)")
            #expect(report.problem?.contains("key store") == true && report.problem?.contains(expected) == true, "\(report)")
        }
    }

    @Test func theSeededSourceRepeatsAndTheSystemOneDoesNot() {
        #expect(SecretSource.seeded("a").bytes(32, for: "x") == SecretSource.seeded("a").bytes(32, for: "x"))
        #expect(SecretSource.seeded("a").bytes(32, for: "x") != SecretSource.seeded("b").bytes(32, for: "x"))
        let seeded = SecretSource.seeded("a")
        #expect(seeded.bytes(32, for: "x") != seeded.bytes(32, for: "y"))
        #expect(SecretSource.system.bytes(32, for: "x") != SecretSource.system.bytes(32, for: "x"))
        #expect(SecretSource.system.bytes(12, for: "x").count == 12)
    }
}
