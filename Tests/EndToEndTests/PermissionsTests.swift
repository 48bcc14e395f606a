import Foundation
import Testing

@Suite("permissions", .timeLimit(.minutes(10)))
struct PermissionsTests {
    @Test("lists each permission's latest state, ordered by name, with canPrompt only in notDetermined and askAgain")
    func states() throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:15"])
            #expect(result.string("subject") == "kid-ava")
            #expect(try result.object("asOf").int("seq") == 15)
            #expect(result["require"] == nil, "require only with --require")

            let permissions = try result.objects("permissions")
            #expect(permissions.map { $0.string("permission") } == ["camera", "contacts", "microphone", "notifications", "photoLibrary"])
            #expect(permissions.map { $0.string("state") } == ["doNotAskAgain", "notDetermined", "authorized", "provisional", "limited"])
            #expect(permissions.map { $0.string("since") } == [
                "2026-11-20T08:30:00Z", "2026-11-20T08:50:00Z", "2026-11-20T08:10:00Z", "2026-11-20T08:20:00Z", "2026-11-20T08:40:00Z",
            ])
            #expect(permissions.map { $0.bool("canPrompt") } == [false, true, false, false, false])

            let ben = try sandbox.json(["permissions", "--subject", "kid-ben", "--ledger", ledger, "--as-of", "seq:15"]).objects("permissions")
            #expect(ben.map { $0.string("permission") } == ["camera", "health", "locationWhenInUse", "tracking"])
            #expect(ben.map { $0.string("state") } == ["denied", "unsupported", "authorized", "restricted"])
            #expect(ben.allSatisfy { $0.bool("canPrompt") == false })
        }
    }

    @Test("--as-of shows earlier states")
    func asOf() throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let early = try sandbox.json(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:2"]).objects("permissions")
            #expect(early.map { $0.string("permission") } == ["camera"])
            #expect(early.first?.string("state") == "askAgain")
            #expect(early.first?.bool("canPrompt") == true)

            let middle = try sandbox.json(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:11"]).objects("permissions")
            #expect(middle.first { $0.string("permission") == "contacts" }?.string("state") == "denied")
        }
    }

    @Test("--require gives satisfied and the missing permissions", arguments: [
        ("camera,microphone", false, ["camera"]),
        ("microphone,notifications,photoLibrary", true, []),
        ("microphone", true, []),
        ("bluetooth,camera,contacts", false, ["bluetooth", "camera", "contacts"]),
    ])
    func require(_ names: String, _ satisfied: Bool, _ missing: [String]) throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:15", "--require", names])
            let require = try result.object("require")
            #expect(require.bool("satisfied") == satisfied)
            #expect(require["missing"] as? [String] == missing)
            #expect(try result.objects("permissions").count == 5, "the list is unchanged by --require")
        }
    }

    @Test("--format csv with --require says of each permission whether it is required and missing, with a record for one never recorded")
    func requireInCSV() throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:15",
                                          "--require", "bluetooth,camera,microphone", "--format", "csv"])
            #expect(result.status == 0, "\(result)")
            let records = try #require(parseCSV(result.out), "not RFC 4180 CSV: \(result)")
            let header = try #require(records.first)
            #expect(records.allSatisfy { $0.count == header.count }, "\(records)")
            let rows = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
            // Ordered by permission, the one never recorded among them.
            #expect(rows.map { $0["permission"] } == ["bluetooth", "camera", "contacts", "microphone", "notifications", "photoLibrary"])
            #expect(rows.map { $0["required"] } == ["true", "true", "false", "true", "false", "false"])
            // As the JSON's "missing": bluetooth (never recorded) and camera (doNotAskAgain).
            #expect(rows.filter { $0["missing"] == "true" }.map { $0["permission"] } == ["bluetooth", "camera"])
            #expect(rows.first?["state"] == "", "no state recorded: \(rows)")

            let plain = try sandbox.run(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:15", "--format", "csv"])
            #expect(parseCSV(plain.out)?.first?.contains("required") == false, "the columns only with --require: \(plain)")
        }
    }

    @Test("an unknown permission in --require is wrong usage (exit 2)", arguments: ["camera,teleport", "Camera", "location"])
    func unknownRequiredPermission(_ names: String) throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["permissions", "--subject", "kid-ava", "--ledger", ledger, "--require", names])
            #expect(result.status == 2, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }
}
