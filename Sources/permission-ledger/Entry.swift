import ArgumentParser
import Foundation
import PermissionLedger

@main
struct PermissionLedgerTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permission-ledger",
        abstract: "Record and audit parental-permission decisions in an append-only ledger.",
        discussion: """
        The ledger is a directory (an LMDB environment). Give it with --ledger DIR, or set \
        PERMISSION_LEDGER; the default is ./permission-ledger.

        Exit codes: 0 success; 1 input rejected (nothing written); 2 wrong usage; 3 the ledger \
        could not be opened or read; 4 verify found damage; 5 a digest differed from --expect-digest.
        """,
        subcommands: [
            Import.self, Export.self, Verify.self, Digest.self, Replay.self,
            Question.self, Questions.self, KnownHandles.self, Permissions.self,
            History.self, Diff.self, Stats.self, WhoApproved.self, Rebuild.self,
        ]
    )

    static func main() async {
        // Past a file size limit (ulimit -f) a write fails with EFBIG and the tool says so, instead of the
        // default SIGXFSZ killing it.
        signal(SIGXFSZ, SIG_IGN)
        guard CommandLine.arguments.count > 1 else {
            // No command at all is wrong usage, as a missing argument is (CLI.md): exit 2, not the help with 0.
            let commands = configuration.subcommands.map { $0._commandName }.joined(separator: ", ")
            printError("usage: a command is missing; one of \(commands) (see permission-ledger --help)")
            Foundation.exit(2)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as ToolFailure {
            for line in failure.lines { printError(line) }
            Foundation.exit(failure.code.rawValue)
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help and --version.
                self.exit(withError: error)
            }
            // Anything the parser rejects is wrong usage: exit 2, one line, and where to look.
            let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "wrong usage"
            printError("usage: \(message) (see permission-ledger --help)")
            Foundation.exit(2)
        }
    }
}

/// The exit codes of CLI.md.
enum ToolExit: Int32 {
    case rejected = 1
    case usage = 2
    case unreadable = 3
    case damaged = 4
    case digestMismatch = 5
}

/// A failure to report: one line a problem, then exit with its code.
struct ToolFailure: Error {
    var code: ToolExit
    var lines: [String]

    init(_ code: ToolExit, _ lines: String...) {
        self.code = code
        self.lines = lines
    }

    init(_ code: ToolExit, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// Maps a ledger error to its exit code. Damage is exit 4 only when `verify` finds it (``Verify`` says so
    /// itself); any other command that meets it could not read the ledger: exit 3, with a pointer to `verify`.
    init(_ error: any Error) {
        if let failure = error as? ToolFailure {
            self = failure
            return
        }
        guard let error = error as? LedgerError else {
            self.init(.unreadable, "\(error)")
            return
        }
        switch error.kind {
        case .notFound: self.init(.rejected, error.description)
        case .damaged: self.init(.unreadable, error.description + " (run permission-ledger verify for a full check)")
        case .missing, .notALedger, .locked, .storage: self.init(.unreadable, error.description)
        }
    }
}

func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Standard output, buffered: large exports are written in chunks.
struct Output {
    private var buffer: [UInt8] = []

    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func line(_ text: String) { write(text + "\n") }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

func writeOut(_ text: String) {
    var out = Output()
    out.line(text)
    out.flush()
}
