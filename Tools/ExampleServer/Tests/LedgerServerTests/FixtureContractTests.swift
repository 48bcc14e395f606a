import Foundation
import Hummingbird
import HummingbirdTesting
import LedgerServer
import Logging
import Testing

/// The repository's own contract fixtures, served: every rejected fixture gets the tool's first error line,
/// and every expected query result of a valid fixture (`NAME.expected`, the tool's `--format json` output)
/// comes back from the matching route, equal as JSON.
@Suite struct FixtureContractTests {
    static func names(endingIn suffix: String, in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(suffix) }.sorted()
    }

    static let invalid = names(endingIn: ".jsonl", in: Fixtures.directory.appendingPathComponent("invalid"))
    static let valid = names(endingIn: ".expected", in: Fixtures.directory).map { String($0.dropLast(".expected".count)) }

    @Test(arguments: invalid)
    func aRejectedFixtureNamesTheToolsFirstErrorLine(_ name: String) async throws {
        let text = try Fixtures.text("invalid/" + name)
        let expected = try #require(text.split(separator: "\n").first { $0.hasPrefix("# error: ") }).dropFirst("# error: ".count)
        try await TestLedger.with { test in
            let app = LedgerServer.application(ledger: test.ledger, configuration: .init(), logger: Logger(label: "test"))
            try await app.test(.router) { client in
                let response = try await client.execute(uri: "/events", method: .post, body: ByteBuffer(string: text))
                #expect([.badRequest, .unprocessableContent].contains(response.status))
                #expect(response.json["error"] as? String == "line " + expected)
            }
            #expect(try test.ledger.head().seq == 0)
        }
    }

    @Test(arguments: valid)
    func aValidFixturesExpectedResultsAreServed(_ name: String) async throws {
        let checks = try Fixtures.text(name + ".expected").split(separator: "\n").compactMap { line in
            try (JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).map(Check.init)
        }
        try await TestLedger.with { test in
            let app = LedgerServer.application(ledger: test.ledger, configuration: .init(), logger: Logger(label: "test"))
            try await app.test(.router) { client in
                let imported = try await client.execute(
                    uri: "/events", method: .post, body: ByteBuffer(string: try Fixtures.text(name + ".jsonl")))
                #expect(imported.status == .ok)
                var compared = 0
                for check in checks {
                    guard let uri = ToolCommand(check.arguments).uri else { continue }
                    compared += 1
                    let response = try await client.execute(uri: uri, method: .get)
                    #expect(response.status == .ok, "\(uri): \(response.text)")
                    #expect(
                        try Self.canonical(response.json, ignoring: check.ignored) == check.output,
                        "\(name): \(check.arguments.joined(separator: " ")) → \(uri)")
                }
                // Every valid fixture checks at least one query the server answers (the others: digest, diff, who-approved).
                #expect(compared > 0)
            }
        }
    }

    /// One line of an `.expected` file: a command, its output as canonical JSON, the keys not compared.
    struct Check: Sendable {
        var arguments: [String]
        var output: String
        var ignored: [String]

        init(_ object: [String: Any]) throws {
            arguments = object["args"] as? [String] ?? []
            ignored = object["ignore"] as? [String] ?? []
            output = try FixtureContractTests.canonical(object["output"] as? [String: Any] ?? [:], ignoring: ignored)
        }
    }

    /// An object as sorted-key JSON text without the keys `ignored`, for comparing values whatever the order.
    static func canonical(_ object: [String: Any], ignoring ignored: [String]) throws -> String {
        let kept = object.filter { !ignored.contains($0.key) }
        return String(decoding: try JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys]), as: UTF8.self)
    }
}

/// A `permission-ledger` command line of an `.expected` check, as the server's route that answers it.
struct ToolCommand {
    let uri: String?

    init(_ arguments: [String]) {
        var options: [String: String] = [:]
        var positional: [String] = []
        var index = 1
        while index < arguments.count {
            if arguments[index].hasPrefix("--"), index + 1 < arguments.count {
                options[String(arguments[index].dropFirst(2))] = arguments[index + 1]
                index += 2
            } else {
                positional.append(arguments[index])
                index += 1
            }
        }
        func query(_ names: [(option: String, parameter: String)]) -> String {
            let pairs = names.compactMap { name in options[name.option].map { "\(name.parameter)=\(Self.encoded($0))" } }
            return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
        }
        let subject = options["subject"].map(Self.encoded) ?? ""
        switch arguments.first {
        case "known-handles": uri = "/subjects/\(subject)/known-handles" + query([("as-of", "as-of")])
        case "questions": uri = "/subjects/\(subject)/questions" + query([("state", "state"), ("as-of", "as-of")])
        case "question": uri = "/questions/\(positional.first ?? "")" + query([("as-of", "as-of")])
        case "permissions": uri = "/subjects/\(subject)/permissions" + query([("as-of", "as-of"), ("require", "require")])
        case "history":
            uri = "/history" + query([("subject", "subject"), ("question", "question"), ("type", "type"), ("from", "from"), ("to", "to")])
        case "stats": uri = "/stats" + query([("as-of", "as-of")])
        default: uri = nil
        }
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:,")) ?? text
    }
}
