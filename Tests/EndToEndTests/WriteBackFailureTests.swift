import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// A failed write-back is reported by Linux once to each open file description. A commit's own flush
/// (LMDB's, on the environment's descriptor) can be the one that hears of it, and fail; the ledger's flush,
/// which makes a commit durable, must still hear of it, since what the write-back lost may be an earlier
/// commit's meta page that was waiting for that flush.
@Suite("Failed write-back")
struct WriteBackFailureTests {
    @Test("a write-back failure that a commit's flush heard of first still fails the ledger's next flush, and every append after it until the ledger is opened again",
          .enabled(if: FailingDisk.canMake, "needs root, losetup and mkfs.ext2"),
          arguments: [false, true])
    func failureHeardOnce(synchronously: Bool) async throws {
        try await withSandboxAsync { sandbox in
            try await FailingDisk.withAsync(at: sandbox.path("disk")) { disk in
                let path = disk.mountPoint + "/ledger"
                let more = try Fixture.events(at: DiskFullTests.moreEvents(in: sandbox))
                var ledger: Ledger? = try Ledger(path: path)
                func append(_ events: [PermissionEvent]) async throws -> Int {
                    synchronously ? try ledger!.appendSynchronously(events).appended : try await ledger!.append(events).appended
                }
                #expect(try await append(Fixture.events("family-day.jsonl")) == 1200)
                let head = try ledger!.head()

                // The device under the file system runs out of room: the file system still takes the pages,
                // and the commit's flush fails when they are written back.
                try disk.fillDevice()
                await #expect(throws: LedgerError.self) { _ = try await append(more) }
                #expect(try ledger!.head() == head)

                // Room again. The commit and LMDB's own flush succeed, as the failure was reported to its
                // descriptor already; the ledger's flush, through a descriptor of its own, still hears of it.
                try disk.emptyDevice()
                await #expect {
                    _ = try await append(more)
                } throws: { error in
                    (error as? LedgerError)?.message.contains("flushing the commit to disk failed") == true
                }
                // Nothing more is appended until the ledger is opened again: the disk lost something.
                let one = try PermissionEvent(
                    id: "after-failure", subject: "kid-ben", occurredAt: Timestamp(rfc3339: "2026-11-23T10:00:00Z"),
                    payload: .permissionChanged(.camera, state: .authorized, cause: .settings))
                await #expect {
                    _ = try await append([one])
                } throws: { error in
                    (error as? LedgerError)?.message.contains("flushing the commit to disk failed") == true
                }

                ledger = nil
                let reopened = try Ledger(path: path)
                #expect(try await reopened.verify().isIntact)
                // The commit whose flush failed is in the log: it was committed, only not known to be durable. When
                // the key store's flush, which comes before the commit, heard of the failure first, the append
                // after it was refused before it committed.
                #expect([head.seq, head.seq + UInt64(more.count)].contains(try reopened.head().seq))
                #expect(try reopened.appendSynchronously([one]).appended == 1)
            }
        }
    }
}

/// An ext2 file system on a loop device whose backing file lies, sparse, on a small tmpfs: once the tmpfs
/// is full, writing back a page the backing file has no room for fails (root only).
struct FailingDisk {
    let base: String
    let device: String
    var mountPoint: String { base + "/mnt" }
    var backingStore: String { base + "/backing" }

    /// Whether this machine lets the tests make one: root, `losetup`, `mkfs.ext2` and a free loop device.
    static let canMake: Bool = {
        guard geteuid() == 0, runSystemCommand(["which", "losetup", "mkfs.ext2"]) != nil else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("failing-disk-probe-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard let disk = try? make(at: probe) else { return false }
        disk.remove()
        return true
    }()

    static func withAsync<T>(at path: String, _ body: (FailingDisk) async throws -> T) async throws -> T {
        let disk = try make(at: path)
        defer { disk.remove() }
        return try await body(disk)
    }

    private static func make(at base: String) throws -> FailingDisk {
        let store = base + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        // Room for the file system's own blocks and a ledger of a few thousand events, not for 32 MiB.
        guard TinyFileSystem.mountTmpfs(bytes: 6 << 20, at: store) else {
            throw FailingDiskError("could not mount a tmpfs at \(store)")
        }
        guard runSystemCommand(["truncate", "-s", "32M", store + "/backing"]) != nil,
              let device = runSystemCommand(["losetup", "-f", "--show", store + "/backing"])?.trimmingCharacters(in: .whitespacesAndNewlines),
              !device.isEmpty else {
            runSystemCommand(["umount", "-l", store])
            throw FailingDiskError("could not attach a loop device")
        }
        let disk = FailingDisk(base: base, device: device)
        guard runSystemCommand(["mkfs.ext2", "-q", "-F", "-N", "32", "-m", "0", device]) != nil,
              (try? FileManager.default.createDirectory(atPath: disk.mountPoint, withIntermediateDirectories: true)) != nil,
              runSystemCommand(["mount", device, disk.mountPoint]) != nil else {
            disk.remove()
            throw FailingDiskError("could not make an ext2 file system on \(device)")
        }
        return disk
    }

    /// Fills the tmpfs under the backing file, so that no block of the file system not yet written can be.
    func fillDevice() throws {
        try TinyFileSystem.fill(withFileAt: base + "/store/filler")
    }

    func emptyDevice() throws {
        try FileManager.default.removeItem(atPath: base + "/store/filler")
    }

    func remove() {
        runSystemCommand(["umount", "-l", mountPoint])
        runSystemCommand(["losetup", "-d", device])
        runSystemCommand(["umount", "-l", base + "/store"])
    }
}

struct FailingDiskError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
