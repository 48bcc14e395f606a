import Foundation
import Testing

/// The example executable of the documentation runs, and leaves a ledger the audit tool verifies.
@Suite(.timeLimit(.minutes(10))) struct ExampleTests {
    /// Where `family-simulation` was built: next to `permission-ledger`.
    static var executable: URL? {
        Tool.executable.map { $0.deletingLastPathComponent().appendingPathComponent("family-simulation") }
    }

    @Test func theFamilySimulationRunsAndPrintsWhatItSaw() throws {
        try withSandbox { sandbox in
            let program = try #require(Self.executable)
            let ledger = sandbox.path("family")
            let process = Process()
            process.executableURL = program
            // Questions that expire in ten seconds, not the demo's one and a half: on a loaded machine the asks and
            // answers, each flushed to disk, could take longer, and an answer after the expiry is rejected.
            process.arguments = ["--ledger", ledger, "--expires-in", "10"]
            let output = sandbox.path("family.out")
            try Data().write(to: URL(fileURLWithPath: output))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardOutput = handle
            process.standardError = handle
            try spawn(process)
            process.waitUntilExit()
            try handle.close()
            let text = try String(contentsOfFile: output, encoding: .utf8)
            #expect(process.terminationStatus == 0, "\(text)")
            let lines = text.split(separator: "\n").map(String.init)
            // Live lines, in whatever order the tasks ran.
            #expect(lines.filter { $0.hasPrefix("  response ") }.count == 4, "\(text)")
            #expect(lines.filter { $0.hasPrefix("  ask failed ") }.count == 3, "\(text)")
            #expect(lines.filter { $0.hasPrefix("  canceled ") }.count == 3, "\(text)")
            // The seq of the update depends on how the tasks interleaved.
            #expect(lines.contains { $0.hasPrefix("  known      kid-ava may talk to: nobody yet  (as of seq ") }, "\(text)")
            #expect(lines.contains { $0.hasPrefix("  known      kid-ava may talk to: player-0-2  (as of seq ") }, "\(text)")
            #expect(lines.contains("  sweep      expired 2 ignored questions"), "\(text)")
            #expect(lines.contains("  sweep      again: expired 0 (sweeps are idempotent)"), "\(text)")
            // The summary does not depend on timing.
            #expect(lines.contains("  kid-ava: questions 1 approved, 1 canceled, 1 denied, 1 failed; may talk to: player-0-2"), "\(text)")
            #expect(lines.contains("  kid-ben: questions 1 approved, 1 canceled, 1 expired, 1 failed; may talk to: +14155550103"), "\(text)")
            #expect(lines.contains("  kid-cy: questions 1 canceled, 1 denied, 1 expired, 1 failed; may talk to: nobody yet"), "\(text)")
            #expect(lines.contains { $0.hasPrefix("verify: ok, 24 events, head ") }, "\(text)")

            let verify = try sandbox.run(["verify", "--ledger", ledger])
            #expect(verify.status == 0, "\(verify)")
            let expired = try sandbox.json(["questions", "--ledger", ledger, "--state", "expired"])
            #expect(try expired.objects("questions").count == 2)
        }
    }
}
