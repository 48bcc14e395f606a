import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// Disk full and limits (docs/RELIABILITY.md): a write that runs out of room fails with a plain error, stores
/// nothing, and leaves the ledger readable, intact and writable once there is room again.
@Suite("Disk full and limits")
struct DiskFullTests {
    /// `family-day.jsonl` again under other ids and with no `recordedAt`, so that it appends after itself.
    static func moreEvents(in sandbox: Sandbox) throws -> String {
        let text = try Fixture.text("family-day.jsonl")
            .replacing(/"recordedAt":"[^"]*",/, with: "")
            .replacing("\"id\":\"fd-", with: "\"id\":\"more-fd-")
            .replacing("FAD10000-", with: "FAD20000-")
        return try sandbox.write(text, to: "more.jsonl")
    }

    @Test("past the file size limit (ulimit -f), import exits 3 saying so, and the ledger is unchanged and writable")
    func fileSizeLimit() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let more = try Self.moreEvents(in: sandbox)
            let before = try sandbox.export(ledger)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: ledger + "/data.mdb")[.size] as? Int)

            // prlimit sets the limit for the tool alone; the tool ignores SIGXFSZ, so the write fails with EFBIG
            // (or stops short) instead of the signal killing it.
            let limited = try sandbox.run(
                ["import", "--ledger", ledger, more], launcher: ["/usr/bin/prlimit", "--fsize=\(size + 16_384)"])
            #expect(!limited.crashed, "\(limited)")
            #expect(limited.status == 3, "\(limited)")
            #expect(limited.errorLines == [
                "\(ledger): the data file reached this process's file size limit (ulimit -f: \(size + 16_384) bytes); the write failed, and what the ledger held before is intact",
            ], "\(limited)")
            #expect(try sandbox.export(ledger) == before)
            let verify = try sandbox.run(["verify", "--ledger", ledger])
            #expect(verify.status == 0, "\(verify)")

            // With the limit gone, the same import goes through and continues the chain.
            let again = try sandbox.run(["import", "--ledger", ledger, more])
            #expect(try ImportSummary(again) == ImportSummary(appended: 1200, duplicates: 0, head: 2400))
            #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0)
        }
    }

    /// A command that ran out of room: exit 3 with one line naming the ledger and the full device, and the
    /// ledger still exports `before` and verifies intact.
    static func expectNoSpace(
        _ result: ToolRun, ledger: String, holding before: Data, in sandbox: Sandbox,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(result.status == 3, "\(result)", sourceLocation: sourceLocation)
        #expect(result.errorLines.count == 1, "\(result)", sourceLocation: sourceLocation)
        #expect(result.err.hasPrefix("\(ledger): no space left on the device ("), "\(result)", sourceLocation: sourceLocation)
        #expect(try sandbox.export(ledger) == before, sourceLocation: sourceLocation)
        #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0, sourceLocation: sourceLocation)
    }

    @Test("on a full file system, import exits 3 with 'no space left on the device', and the ledger is unchanged",
          .enabled(if: TinyFileSystem.canMount, "needs root to mount a small tmpfs"))
    func fullFileSystem() throws {
        try withSandbox { sandbox in
            try TinyFileSystem.with(bytes: 1 << 20, at: sandbox.path("tiny")) { mount in
                let ledger = mount + "/ledger"
                _ = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"), named: "tiny/ledger")
                let more = try Self.moreEvents(in: sandbox)
                let before = try sandbox.export(ledger)

                let full = try sandbox.run(["import", "--ledger", ledger, more])
                try Self.expectNoSpace(full, ledger: ledger, holding: before, in: sandbox)
                #expect(full.err.contains("the write failed, and what the ledger held before is intact"), "\(full)")
            }
        }
    }

    /// `rebuild` writes into LMDB's map, which it makes writable: it reserves the file's room on disk before it
    /// writes, so that a full disk is an error there and not a fault (SIGBUS) on a write into a hole of the map.
    @Test("on a full file system, rebuild exits 3 with 'no space left on the device', unharmed, and the ledger is unchanged",
          .enabled(if: TinyFileSystem.canMount, "needs root to mount a small tmpfs"))
    func rebuildOnAFullFileSystem() throws {
        try withSandbox { sandbox in
            try TinyFileSystem.with(bytes: 1 << 20, at: sandbox.path("tiny")) { mount in
                let ledger = mount + "/ledger"
                _ = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"), named: "tiny/ledger")
                let before = try sandbox.export(ledger)

                let full = try sandbox.run(["rebuild", "--ledger", ledger])
                #expect(!full.crashed, "\(full)")
                try Self.expectNoSpace(full, ledger: ledger, holding: before, in: sandbox)
            }
        }
    }

    @Test("past the file size limit (ulimit -f), rebuild exits 3 saying so, and the ledger is unchanged")
    func rebuildPastTheFileSizeLimit() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let before = try sandbox.export(ledger)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: ledger + "/data.mdb")[.size] as? Int)

            let limited = try sandbox.run(["rebuild", "--ledger", ledger], launcher: ["/usr/bin/prlimit", "--fsize=\(size + 16_384)"])
            #expect(!limited.crashed, "\(limited)")
            #expect(limited.status == 3, "\(limited)")
            #expect(limited.err.hasPrefix("\(ledger): the data file reached this process's file size limit (ulimit -f: \(size + 16_384) bytes)"),
                    "\(limited)")
            #expect(try sandbox.export(ledger) == before)
            #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0)
            let rebuilt = try sandbox.run(["rebuild", "--ledger", ledger])
            #expect(rebuilt.status == 0 && rebuilt.out == "rebuilt the projections of 1200 events\n", "\(rebuilt)")
        }
    }

    @Test("in one process: an append on a full disk throws .storage, and once there is room the same Ledger appends again",
          .enabled(if: TinyFileSystem.canMount, "needs root to mount a small tmpfs"))
    func fullDiskInProcess() async throws {
        try await withSandboxAsync { sandbox in
            try await TinyFileSystem.withAsync(bytes: 2 << 20, at: sandbox.path("tiny")) { mount in
                let ledger = try Ledger(path: mount + "/ledger")
                let events = try Fixture.events("family-day.jsonl")
                _ = try await ledger.append(events)
                let head = try ledger.head()
                // Fill the rest of the file system.
                let filler = mount + "/filler"
                try TinyFileSystem.fill(withFileAt: filler)

                let more = try Fixture.events(at: DiskFullTests.moreEvents(in: sandbox))
                await #expect {
                    _ = try await ledger.append(more)
                } throws: { error in
                    guard let error = error as? LedgerError else { return false }
                    return error.kind == .storage && error.message.contains("no space left on the device")
                }
                #expect(try ledger.head() == head)
                #expect(try await ledger.verify().isIntact)

                try FileManager.default.removeItem(atPath: filler)
                let summary = try await ledger.append(more)
                #expect(summary.appended == more.count)
                #expect(try ledger.head().seq == head.seq + UInt64(more.count))
                #expect(try await ledger.verify().isIntact)
            }
        }
    }
}

/// A small tmpfs, mounted for one test (root only).
enum TinyFileSystem {
    static let canMount: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-probe-\(UUID().uuidString)").path
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard mountTmpfs(bytes: 64 << 10, at: probe) else { return false }
        return run(["umount", probe])
    }()

    static func with<T>(bytes: Int, at path: String, _ body: (String) throws -> T) throws -> T {
        try mount(bytes: bytes, at: path)
        defer { _ = run(["umount", "-l", path]) }
        return try body(path)
    }

    static func withAsync<T>(bytes: Int, at path: String, _ body: (String) async throws -> T) async throws -> T {
        try mount(bytes: bytes, at: path)
        defer { _ = run(["umount", "-l", path]) }
        return try await body(path)
    }

    private static func mount(bytes: Int, at path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try #require(mountTmpfs(bytes: bytes, at: path), "could not mount a tmpfs at \(path)")
    }

    /// Mounts a tmpfs of `bytes` at the existing directory `path`; whether it could.
    static func mountTmpfs(bytes: Int, at path: String) -> Bool {
        run(["mount", "-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path])
    }

    /// Writes zeros into a new file at `path` until its file system has no room left.
    static func fill(withFileAt path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let chunk = Data(count: 64 << 10)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try handle.close()
    }

    @discardableResult
    private static func run(_ arguments: [String]) -> Bool {
        runSystemCommand(arguments) != nil
    }
}

/// Runs a system command (found in the system's `PATH`, `sbin` included); its standard output when it exits 0.
@discardableResult
func runSystemCommand(_ arguments: [String]) -> String? {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? spawn(process)) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}

extension Fixture {
    /// The events of a fixture file, parsed as `import` parses them.
    static func events(_ name: String) throws -> [PermissionEvent] {
        try events(at: path(name))
    }

    static func events(at path: String) throws -> [PermissionEvent] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
            try EventJSON.decode(line: String($0))
        }
    }
}
