import ArgumentParser

@main
struct ReliabilityTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-reliability",
        abstract: "Reliability tests of PermissionLedger that need whole processes: crashes and concurrency.",
        discussion: """
        Run through Tools/crash-test.sh and Tools/stress-test.sh; CI runs small versions of both from the \
        test suite.
        """,
        subcommands: [Crash.self, CrashErase.self, Stress.self, CrashWriter.self, EraseWriter.self, StressReader.self, TableDigests.self])
}
