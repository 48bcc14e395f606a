import ArgumentParser
import Foundation
import PermissionLedger

/// The exit codes of docs/spec/CLI.md.
enum ToolExit: Int32 {
    case rejected = 1
    case usage = 2
    case unreadable = 3
    case damaged = 4
    case digestMismatch = 5
    case outputFailed = 6
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

    /// Standard output could not be written: one line saying why, exit 6 (docs/spec/CLI.md, "Common").
    /// - Parameters:
    ///   - code: the `errno` of the write that failed.
    ///   - what: what was and was not written, or done, such as "the events up to seq 12 were written, not those
    ///     after it".
    static func outputFailed(errno code: Int32, saying what: String = "the output could not be written") -> ToolFailure {
        let why = switch code {
        case ENOSPC: "no space left on the device"
        case EFBIG: "the file reached this process's file size limit (ulimit -f)"
        case EDQUOT: "the disk quota is used up"
        case EIO: "an input/output error"
        default: String(cString: strerror(code))
        }
        return ToolFailure(.outputFailed, "standard output: \(why); \(what)")
    }

    /// Maps a ledger error to its exit code. Damage is exit 4 only when `verify` finds it (``Verify`` says so
    /// itself); any other command that meets it could not read the ledger: exit 3, with a pointer to `verify`.
    init(_ error: any Error) {
        if let failure = error as? ToolFailure {
            self = failure
            return
        }
        if let failure = error as? OutputFailure {
            self = .outputFailed(errno: failure.errno)
            return
        }
        if let unresolved = error as? QuestionReference.Unresolved {
            self.init(.rejected, unresolved.description)
            return
        }
        if let refused = error as? MigrationRefused {
            self.init(.rejected, refused.description)
            return
        }
        guard let error = error as? LedgerError else {
            self.init(.unreadable, "\(error)")
            return
        }
        switch error.kind {
        case .notFound: self.init(.rejected, error.toolDescription)
        case .damaged: self.init(.unreadable, error.toolDescription + " (run permission-ledger verify for a full check)")
        case .missing, .notALedger, .locked, .storage, .closed, .readOnly, .keyUnavailable: self.init(.unreadable, error.toolDescription)
        }
    }
}

extension LedgerError {
    /// The error as this tool reports it: its remedy is the tool's command to run.
    var toolDescription: String { described(remedy: remedy?.toolDescription) }
}

extension LedgerError.Remedy {
    /// The remedy as the command of this tool that does it.
    var toolDescription: String {
        switch self {
        case .verify: "run `permission-ledger verify`"
        case .readAgain: "run the command again"
        case .rebuildProjections(let path):
            "rebuild them once with 'permission-ledger rebuild --ledger \(path)' (the log itself is unchanged)"
        }
    }
}
