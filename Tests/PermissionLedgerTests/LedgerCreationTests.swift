import Dispatch
import Foundation
@testable import PermissionLedger
import Testing

/// A new ledger is made under a mark (``LedgerCreation``): a process killed midway leaves a directory that the next
/// writable open finishes, never one refused as a ledger whose data was lost.
@Suite struct LedgerCreationTests {
    static let mark = LedgerCreation.markerName

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// A directory as a maker killed at `moment` leaves it: its mark, and the files made before the kill.
    static func cutShort(at moment: String, in directory: String) async throws -> String {
        let path = directory + "/ledger"
        // A ledger made whole, then taken back to what the maker had made by `moment`.
        let made = try Ledger(path: path, options: .init(durable: false))
        await made.close()
        #expect(FileManager.default.createFile(atPath: path + "/" + mark, contents: nil))
        switch moment {
        case "after lock.mdb":
            for file in ["data.mdb", "data-keys", "ledger.key"] { try FileManager.default.removeItem(atPath: path + "/" + file) }
        case "before data.mdb's first pages":
            for file in ["data-keys", "ledger.key"] { try FileManager.default.removeItem(atPath: path + "/" + file) }
            #expect(truncate(path + "/data.mdb", 0) == 0)
        case "after the key":
            try FileManager.default.removeItem(atPath: path + "/data-keys")
            #expect(truncate(path + "/data.mdb", 0) == 0)
        default:
            // Made whole; killed before the mark was removed.
            break
        }
        return path
    }

    @Test(arguments: ["after lock.mdb", "before data.mdb's first pages", "after the key", "before the mark went"])
    func aMakingCutShortIsFinishedByTheNextWriterAndNamedToAReader(_ moment: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = try await Self.cutShort(at: moment, in: directory)
            let key = Self.exists(path + "/ledger.key") ? try Data(contentsOf: URL(fileURLWithPath: path + "/ledger.key")) : nil
            let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()

            if moment != "before the mark went" {
                // A reader says what happened and what to do, and writes nothing.
                let read = ledgerError { _ = try Ledger(path: path, options: .init(readOnly: true)) }
                #expect(read?.kind == .notALedger)
                #expect(read?.message == "\(path): a ledger was being made here and is not made yet (its maker may have stopped midway); open it for writing, for example with import, to finish making it")
                #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
            }

            let ledger = try Ledger(path: path, options: .init(durable: false))
            #expect(!Self.exists(path + "/" + Self.mark), "the mark is removed once the ledger is made")
            if let key { #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/ledger.key")) == key, "the key made before is the ledger's") }
            try await ledger.append(json: JSONLine.permission("p1", "camera", "denied", at: "09:00:00", recorded: "09:00:01"))
            #expect(try await ledger.head().seq == 1)
            await ledger.close()
            let reader = try Ledger(path: path, options: .init(readOnly: true))
            #expect(try await reader.verify().problem == nil)
            await reader.close()
        }
    }

    @Test func withoutTheMarkWhatAMakerLeavesIsStillRefusedAsLostData() async throws {
        try await withTemporaryDirectory { directory in
            let path = try await Self.cutShort(at: "after lock.mdb", in: directory)
            try FileManager.default.removeItem(atPath: path + "/" + Self.mark)
            let error = ledgerError { _ = try Ledger(path: path, options: .init(durable: false)) }
            #expect(error?.message.hasPrefix("\(path): holds a lock.mdb but no data.mdb; the ledger's data is lost") == true, "\(String(describing: error))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["lock.mdb"])
        }
    }

    @Test func aLedgerWithEventsAndAMarkKeepsItsEvents() async throws {
        try await withClosedLedgerOfOneEvent { path in
            #expect(FileManager.default.createFile(atPath: path + "/" + Self.mark, contents: nil))
            let ledger = try Ledger(path: path, options: .init(durable: false))
            #expect(try await ledger.head().seq == 1)
            #expect(!Self.exists(path + "/" + Self.mark))
        }
    }

    /// While a maker holds the directory's lock, a writer that finds its mark waits, and other ledgers of the process
    /// open meanwhile; once the lock is let go (as a killed maker's is), the writer finishes the making, or opens the
    /// ledger the maker made.
    @Test(arguments: ["killed", "done"]) func aWriterWaitsForAMakerAtWork(_ maker: String) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/ledger"
            #expect(mkdir(path, 0o700) == 0)
            let lock = open(path, O_RDONLY | O_DIRECTORY)
            #expect(lock >= 0 && flock(lock, LOCK_EX) == 0)
            #expect(FileManager.default.createFile(atPath: path + "/" + Self.mark, contents: nil))
            let opened = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var outcome: Result<Ledger, LedgerError>?
            Thread.detachNewThread {
                do throws(LedgerError) {
                    outcome = .success(try Ledger(path: path, options: .init(durable: false)))
                } catch {
                    outcome = .failure(error)
                }
                opened.signal()
            }
            #expect(opened.wait(timeout: .now() + 0.5) == .timedOut, "the writer waits while the maker holds the lock")
            #expect(!Self.exists(path + "/data.mdb"))
            // Another ledger opens while the writer waits.
            let other = try Ledger(path: directory + "/other", options: .init(durable: false))
            await other.close()
            if maker == "done" {
                // What the maker made: a ledger of one event, its mark removed.
                try await withClosedLedgerOfOneEvent { made in
                    for file in try FileManager.default.contentsOfDirectory(atPath: made) {
                        try FileManager.default.copyItem(atPath: made + "/" + file, toPath: path + "/" + file)
                    }
                }
                try FileManager.default.removeItem(atPath: path + "/" + Self.mark)
            }
            close(lock)
            #expect(opened.wait(timeout: .now() + 60) == .success)
            let ledger = try #require(try outcome?.get())
            #expect(!Self.exists(path + "/" + Self.mark))
            #expect(try await ledger.head().seq == (maker == "done" ? 1 : 0))
            await ledger.close()
        }
    }

    /// A writer that makes no ledger (erase, retain, rebuild) leaves a making it finds to one that does.
    @Test func aWriterThatMakesNoLedgerRefusesOneNotMadeYet() async throws {
        try await withTemporaryDirectory { directory in
            let path = try await Self.cutShort(at: "before the mark went", in: directory)
            var options = Ledger.Options(durable: false)
            options.makesLedger = false
            let error = ledgerError { _ = try Ledger(path: path, options: options) }
            #expect(error?.message == "\(path): a ledger was being made here and is not made yet (its maker may have stopped midway); open it, for example with import, to finish making it")
            #expect(Self.exists(path + "/" + Self.mark))
        }
    }

    @Test func somethingPlantedInPlaceOfTheMarkIsRefused() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            #expect(mkdir(path, 0o700) == 0 && mkdir(path + "/" + Self.mark, 0o700) == 0)
            let error = ledgerError { _ = try Ledger(path: path, options: .init(durable: false)) }
            #expect(error?.message.hasPrefix("\(path)/\(Self.mark): is not the empty file of yours that marks a ledger being made") == true, "\(String(describing: error))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == [Self.mark])
        }
    }
}
