#if os(Linux)
import ChildProcess
import Foundation
import Testing

/// `verify` checks the ledger in a child process of the tool; a user who stops `verify` stops that check too,
/// and the tool ends as a tool without a child would.
@Suite("verify interrupted", .timeLimit(.minutes(10)))
struct VerifyInterruptionTests {
    @Test("SIGTERM while the check's process runs: the check is stopped and verify dies of SIGTERM")
    func terminated() throws {
        try withSandbox { sandbox in
            let executable = try #require(Tool.executable, "permission-ledger was not built: run swift build --build-tests")
            // A ledger whose lock file this process holds as a writer setting it up would (an exclusive record
            // lock on its first byte): the check's process waits for ever in opening it, and ends only if killed.
            let ledger = try sandbox.ledger(importing: Fixture.path("late-answer.jsonl"))
            let lockFile = open(ledger + "/lock.mdb", O_RDWR)
            try #require(lockFile >= 0)
            defer { close(lockFile) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 1
            try #require(fcntl(lockFile, F_SETLK, &lock) == 0, "the lock file's first byte could not be locked")
            // Started with no signal blocked: a Process would pass on the test thread's mask, which blocks SIGTERM.
            let tool = try SpawnRequest(
                executable: Executable(path: executable.path),
                arguments: [executable.path, "verify", "--ledger", ledger],
                fileActions: [0, 1, 2].map { .open("/dev/null", flags: $0 == 0 ? O_RDONLY : O_WRONLY, mode: 0, as: $0) },
                signalDefaults: [SIGINT, SIGTERM, SIGHUP], signalMask: []
            ).spawn()
            var ended = false
            var child: pid_t?
            defer {
                // Only if the test failed: leave nothing running.
                if !ended {
                    kill(tool, SIGKILL)
                    _ = Termination.wait(for: tool)
                }
                if let child, Self.isAlive(child) { kill(child, SIGKILL) }
            }

            // The tool catches SIGTERM once its child runs (to forward it): send it only then.
            try Self.waitUntil("the tool catches SIGTERM") { Self.catchesSIGTERM(tool) || !Self.isAlive(tool) }
            try #require(Self.isAlive(tool), "verify ended before it was interrupted")
            let checking = try #require(Self.children(of: tool).first, "verify has no checking process")
            child = checking
            kill(tool, SIGTERM)

            try Self.waitUntil("verify ends") { !Self.isAlive(tool) }
            ended = true
            #expect(Termination.wait(for: tool) == .killed(signal: SIGTERM))
            try Self.waitUntil("the check's process ends") { !Self.isAlive(checking) }
        }
    }

    /// Waits until `condition` holds; after two minutes (a hang, not slowness) the test fails.
    private static func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(120)
        while !condition() {
            try #require(Date() < deadline, "still waiting, after two minutes, until \(what)")
            usleep(10_000)
        }
    }

    /// Whether process `pid` has a handler for SIGTERM (`SigCgt` in `/proc/PID/status`).
    private static func catchesSIGTERM(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(SIGTERM - 1)) != 0
    }

    /// The processes whose parent is `pid`.
    private static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { candidate in
            statFields(candidate).map { $0.count > 1 && $0[1] == "\(pid)" } ?? false
        }
    }

    /// Whether `pid` is still a running process (a zombie waiting to be reaped has ended).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard let fields = statFields(pid), let state = fields.first else { return false }
        return state != "Z" && state != "X"
    }

    /// The fields of `/proc/PID/stat` after the command name: state, parent, ...
    private static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }
}
#endif
