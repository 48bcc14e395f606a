import Foundation
import Testing

/// Small runs of `ledger-reliability`: the crash tests and the concurrency stress test. Their full
/// runs are `Tools/crash-test.sh` (200 kills), `Tools/crash-test.sh erase` (100 kills while erasing) and
/// `Tools/stress-test.sh` (a minute).
@Suite("Crash and stress, small runs")
struct ReliabilityTests {
    static let executable = Tool.executable.map {
        $0.deletingLastPathComponent().appendingPathComponent("ledger-reliability")
    }

    func run(_ arguments: [String], in sandbox: Sandbox) throws -> ToolRun {
        try sandbox.run(arguments, program: Self.executable)
    }

    /// The two runs: six kills a ledger up to a second in, and a new ledger every kill within 80 ms of the start.
    enum CrashRun: String, CaseIterable {
        case writing = "a writer killed with SIGKILL 12 times loses nothing acknowledged and damages nothing"
        case making = "a writer killed 12 times within 80 ms of its start, each time on a new ledger, leaves one that opens"

        var arguments: [String] {
            switch self {
            // Kills up to a second in, not 0.4 s: on a loaded machine a writer may take that long to open its ledger
            // and have a first append acknowledged, and a run in which none was would check nothing.
            case .writing: ["--kills-per-ledger", "6", "--max-delay", "1000"]
            // Kills land while the ledger is made (LMDB's files, the key, the key store) or first opened: whatever
            // is left, the next writer makes or opens it (the checks open it for writing).
            case .making: ["--kills-per-ledger", "1", "--max-delay", "80"]
            }
        }
    }

    @Test(arguments: CrashRun.allCases)
    func crash(_ run: CrashRun) throws {
        try withSandbox { sandbox in
            let result = try self.run(["crash", "--kills", "12"] + run.arguments + ["--dir", sandbox.path("crash")], in: sandbox)
            #expect(result.status == 0, "\(result)")
            #expect(result.outLines.last == "12 kills, 0 lost, 0 damaged", "\(result)")
            if run == .writing {
                // The writers did write: the line before counts what was acknowledged.
                let acknowledged = try #require(result.outLines.first { $0.hasPrefix("ok: ") }, "\(result)")
                #expect(!acknowledged.hasPrefix("ok: 0 events"), "\(result)")
            }
        }
    }

    @Test("a process killed with SIGKILL 12 times while it erases leaves every erasure whole or absent")
    func crashWhileErasing() throws {
        try withSandbox { sandbox in
            // Kills up to a second in, as above.
            let result = try run(["crash-erase", "--kills", "12", "--kills-per-ledger", "6", "--max-delay", "1000",
                                  "--dir", sandbox.path("crash-erase")], in: sandbox)
            #expect(result.status == 0, "\(result)")
            #expect(result.outLines.last == "12 kills, 0 partial erasures, 0 damaged", "\(result)")
            // The writers did erase: the line before counts the erasures checked.
            let counts = try #require(result.outLines.first { $0.contains("erasures and") }, "\(result)")
            #expect(!counts.contains(" 0 erasures"), "\(result)")
        }
    }

    @Test("8 writer tasks and 4 reader processes: no reader sees a torn or out-of-order state, verify passes")
    func stress() throws {
        try withSandbox { sandbox in
            let result = try run(
                ["stress", "--seconds", "6", "--writers", "8", "--readers", "4", "--dir", sandbox.path("stress")],
                in: sandbox)
            #expect(result.status == 0, "\(result)")
            #expect(result.out.contains("0 unexpected errors"), "\(result)")
            #expect(result.out.contains("; 0 torn or out of order"), "\(result)")
            #expect(result.out.contains("verify: ok"), "\(result)")
        }
    }
}
