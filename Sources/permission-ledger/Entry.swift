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
        could not be opened or read; 4 verify or verify-bundle found damage; 5 a digest differed from --expect-digest; \
        6 the output could not be written (a full disk, an I/O error).
        """,
        subcommands: [
            Import.self, Export.self, Verify.self, Digest.self, Replay.self,
            Question.self, Questions.self, KnownHandles.self, Permissions.self,
            History.self, Diff.self, Stats.self, WhoApproved.self, Rebuild.self, Backup.self, Migrate.self, Erase.self, Retain.self,
            Keygen.self, CheckpointCommand.self, Prove.self, ProveConsistency.self, BundleCommand.self, VerifyBundle.self, ReportCommand.self,
        ]
    )

    static func main() async {
        // Past a file size limit (ulimit -f) a write fails with EFBIG and the tool says so, instead of the
        // default SIGXFSZ killing it.
        signal(SIGXFSZ, SIG_IGN)
        // Damage LMDB meets where it cannot return an error: one line and exit 3, not a crash.
        DamageReporting.start()
        guard CommandLine.arguments.count > 1 else {
            // No command at all is wrong usage, as a missing argument is (docs/spec/CLI.md): exit 2, not the help with 0.
            let commands = configuration.subcommands.map { $0._commandName }.joined(separator: ", ")
            printError("usage: a command is missing; one of \(commands) (see permission-ledger --help)")
            Foundation.exit(2)
        }
        if let problem = inputNotUTF8() {
            printError("usage: \(problem) (see permission-ledger --help)")
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
            fail(failure)
        } catch let failure as OutputFailure {
            fail(ToolFailure(failure))
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help, --version and the help command: written as any output is, so that a full disk is
                // exit 6 and not a silent exit 0.
                let text = fullMessage(for: error)
                do {
                    if !text.isEmpty { try writeOut(text) }
                } catch {
                    fail(ToolFailure(error))
                }
                Foundation.exit(0)
            }
            // Anything the parser rejects is wrong usage: exit 2, one line, and where to look.
            let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "wrong usage"
            printError("usage: \(message) (see permission-ledger --help)")
            Foundation.exit(2)
        }
    }

    /// What is wrong with the first argument, or value of one of the tool's environment variables
    /// (`PERMISSION_LEDGER…`), that is not valid UTF-8, which `CommandLine.arguments` and `ProcessInfo` would have
    /// repaired silently (each bad byte made U+FFFD): a reference or a subject would be recorded other than given,
    /// and a file name would name another file. The value itself is not shown: it may be personal.
    private static func inputNotUTF8() -> String? {
        func bytes(_ pointer: UnsafePointer<CChar>) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
        }
        let argv = CommandLine.unsafeArgv
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = argv[index] else { continue }
            let argument = bytes(pointer)
            guard String(validating: argument, as: UTF8.self) == nil else { continue }
            // --option=VALUE names its option.
            if argument.starts(with: Array("--".utf8)), let equals = argument.firstIndex(of: UInt8(ascii: "=")),
               let option = String(validating: argument[..<equals], as: UTF8.self) {
                return "the value of \(option) is not valid UTF-8 text"
            }
            let previous = CommandLine.arguments[index - 1]
            let after = index > 1 && previous.hasPrefix("-") && previous != "--" ? " (after \(previous))" : ""
            return "argument \(index)\(after) is not valid UTF-8 text"
        }
        var variable = environ
        while let entry = variable.pointee {
            defer { variable += 1 }
            let text = bytes(entry)
            guard text.starts(with: Array("PERMISSION_LEDGER".utf8)), String(validating: text, as: UTF8.self) == nil,
                  let equals = text.firstIndex(of: UInt8(ascii: "=")), let name = String(validating: text[..<equals], as: UTF8.self) else { continue }
            return "the value of \(name) is not valid UTF-8 text"
        }
        return nil
    }

    /// Reports `failure`, one line a problem, and exits with its code.
    private static func fail(_ failure: ToolFailure) -> Never {
        for line in failure.lines { printError(line) }
        Foundation.exit(failure.code.rawValue)
    }
}
