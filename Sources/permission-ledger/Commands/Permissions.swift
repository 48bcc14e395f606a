import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Permissions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a subject's system permission states, and whether required ones are granted.",
        discussion: """
        With --require, "satisfied" means every named permission is authorized, limited or provisional. \
        The names are separated by commas; an empty name is wrong usage (exit 2), and a name given twice \
        counts once.

        Example:
          permission-ledger permissions --subject kid-1 --require camera,microphone
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "The subject (user).") var subject: String
    @Option(help: ArgumentHelp("Permissions that must be granted, comma-separated.", valueName: "P,P,..."))
    var require: String?
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        var required: [SystemPermission]?
        if let require {
            // An empty item (`--require ""`, `camera,,microphone`, a trailing comma) is a mistake, not a
            // permission that is always satisfied. A name given twice counts once.
            required = try require.split(separator: ",", omittingEmptySubsequences: false).map { name in
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else {
                    throw ToolFailure(.usage, "usage: --require: an empty permission name in \(quoted(require)); give names separated by single commas, such as camera,microphone")
                }
                guard let p = SystemPermission(rawValue: trimmed) else {
                    throw ToolFailure(.usage, "usage: --require: \(quoted(trimmed)) is not a permission; expected some of \(SystemPermission.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return p
            }
            var seen = Set<SystemPermission>()
            required = required?.filter { seen.insert($0).inserted }
        }
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let (permissions, at) = try reading(opened, asOf: point) { (try $0.permissions(subject: subject), $0.point) }
        switch format.resolved {
        case .json:
            try writeOut(QueryJSON.permissionsResult(permissions, subject: subject, at: at, require: required))
        case .table, .csv:
            let csv = format.resolved == .csv
            var table = csv ? Table("permission", "state", "since", "canPrompt", "cause") : Table("permission", "state", "since (UTC)", "prompt", "cause")
            let missing = required.map { QueryJSON.missingPermissions($0, in: permissions) } ?? []
            if csv, required != nil {
                // With --require, each record says whether the permission is required and, if so, whether
                // it is missing; a required permission with no recorded state gets a record of its own.
                table.headers += ["required", "missing"]
            }
            for p in permissions {
                var row = [p.permission.rawValue, p.state.rawValue, csv ? p.since.description : tableTime(p.since),
                           csv ? String(p.canPrompt) : (p.canPrompt ? "yes" : "no"), p.cause?.rawValue ?? ""]
                if csv, let required { row += [String(required.contains(p.permission)), String(missing.contains(p.permission))] }
                table.add(row: row)
            }
            if csv, required != nil {
                for p in missing where !permissions.contains(where: { $0.permission == p }) {
                    table.add(row: [p.rawValue, "", "", "", "", "true", "true"])
                }
                // Still ordered by permission, by code point, as docs/spec/CLI.md orders them.
                table.rows.sort { $0[0].utf8.lexicographicallyPrecedes($1[0].utf8) }
            }
            var text = csv ? table.csv() : "\(displayed(subject)) as of seq \(at.seq), \(at.time)\n\n" + table.text()
            if required != nil, !csv {
                text += missing.isEmpty ? "\nrequired: satisfied\n" : "\nrequired: NOT satisfied; missing \(missing.map(\.rawValue).joined(separator: ", "))\n"
            }
            try writeOut(text, terminator: "")
        }
    }
}
