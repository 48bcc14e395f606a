import ArgumentParser

/// `ledger-server`: serves a ledger over HTTP (the default), or checks a ledger after a load test.
@main
struct LedgerServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-server",
        abstract: "Serve a PermissionLedger over HTTP: append JSON Lines, audit queries as of any point, live event streams.",
        subcommands: [Serve.self, Check.self],
        defaultSubcommand: Serve.self)
}
