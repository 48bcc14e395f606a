import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import files into a fresh temporary ledger, print its digest and head hash, then remove it.",
        discussion: """
        With --expect-digest, exits 5 when the digest differs. Useful in any project's CI to pin \
        down what a fixture means.

        Example:
          permission-ledger replay Fixtures/late-answer.jsonl --expect-digest 3f2a…
        """)

    @Argument(help: ArgumentHelp("JSON Lines files to replay, in order; - reads standard input.", valueName: "FILE"))
    var files: [String]
    @OptionGroup var asOf: AsOfHeadOption
    @Option(name: .customLong("expect-digest"), help: ArgumentHelp("Exit 5 unless the digest is this.", valueName: "HEX"))
    var expectDigest: String?
    @OptionGroup var format: FormatOption

    func validate() throws {
        // A malformed expectation is wrong usage (exit 2), not a digest that differs (exit 5).
        // ASCII digits and letters only: `Character.isHexDigit` also takes their fullwidth forms.
        if let expectDigest, expectDigest.utf8.count != 64
            || !expectDigest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0 & 0xDF) }) {
            throw ValidationError("--expect-digest \(quoted(expectDigest)) is not a digest: expected 64 hexadecimal digits, as digest prints them")
        }
    }

    func run() throws {
        let point = try asOf.point()
        let input = try EventFiles.open(files)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("permission-ledger-replay-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger: Ledger
        do {
            // A throwaway ledger whose secrets come from a fixed seed: a replay prints the same every time.
            var options = Ledger.Options(durable: false)
            options.secrets = .seeded(ToolSecrets.seed ?? SecretSource.testSeed)
            ledger = try Ledger(path: directory, options: options)
        } catch {
            throw ToolFailure(error)
        }
        let summary = try input.append(to: ledger)
        let digest: String
        let resolved: AsOfPoint
        do {
            (digest, resolved) = try ledger.read(asOf: point ?? .seq(summary.head.seq)) { (try $0.digest(), $0.point) }
        } catch {
            throw ToolFailure(error)
        }
        switch format.resolved {
        case .json:
            var json = JSONObjectWriter()
            json.json("asOf", QueryJSON.asOf(resolved))
            json.string("digest", digest)
            json.string("head", "\(summary.head.hash)")
            json.integer("events", summary.head.seq)
            try writeOut(json.text)
        case .csv:
            var table = Table("asOfSeq", "asOfTime", "digest", "head", "events")
            table.add(String(resolved.seq), resolved.time.description, digest, "\(summary.head.hash)", String(summary.head.seq))
            try writeOut(table.csv(), terminator: "")
        case .table:
            try writeOut("digest \(digest)\nhead   \(summary.head.hash) (\(summary.head.seq) events)")
        }
        if let expectDigest, expectDigest.lowercased() != digest {
            throw ToolFailure(.digestMismatch, "digest \(digest) differs from the expected \(expectDigest)")
        }
    }
}
