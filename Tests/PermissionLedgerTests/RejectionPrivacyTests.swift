import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// docs/spec/CLI.md "Common": a rejection names where and why without repeating a personal value, the personal
/// fields being those docs/spec/PRIVACY.md lists (handle values, names, choice titles, a description, an error's
/// message). Checked over every invalid fixture and every case of the hostile-input corpus.
@Suite struct RejectionPrivacyTests {
    /// The personal values of an event given as JSON, in the spellings a message could show them (as given,
    /// trimmed and lowercased, stripped of a phone number's separators), 4 characters or longer so that a short
    /// value cannot be found by chance in the words of a message, and unless the line also gives the same text
    /// in a field that is not personal (a `defaultChoice` spelled like a title), which a message may show.
    static func personalValues(of line: [UInt8]) -> Set<String> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed]) else { return [] }
        var values: [String] = []
        var notPersonal: Set<String> = []
        func walk(_ value: Any, key: String?) {
            if let text = value as? String, let key, !["value", "title", "description", "message"].contains(key) {
                notPersonal.insert(text)
            }
            if let dictionary = value as? [String: Any] {
                if dictionary["kind"] != nil, let handle = dictionary["value"] as? String {
                    values.append(handle)
                    values.append(handle.trimmingCharacters(in: .whitespacesAndNewlines).lowercased())
                    values.append(String(handle.filter { !" -.()".contains($0) }))
                }
                for (name, member) in dictionary {
                    if name == "name", let components = member as? [String: Any] {
                        values += components.values.compactMap { $0 as? String }
                        continue
                    } else if ["title", "description", "message"].contains(name), let text = member as? String {
                        values.append(text)
                    }
                    walk(member, key: name)
                }
            } else if let array = value as? [Any] {
                for item in array { walk(item, key: key) }
            }
        }
        walk(object, key: nil)
        return Set(values.filter { $0.count >= 4 && !notPersonal.contains($0) })
    }

    /// Offers `context` then `bad` (as raw lines) to `ledger` without writing, and returns the first rejection.
    static func reason(context: [[UInt8]], bad: [UInt8], ledger: Ledger) throws -> String? {
        var events: [PermissionEvent] = []
        for line in context + [bad] {
            do {
                if let event = try EventJSON.decode(line: line) { events.append(event) }
            } catch {
                return error.description
            }
        }
        do {
            _ = try ledger.validate(events, maxRejections: 1)
            return nil
        } catch let rejected as AppendRejected {
            return rejected.rejections.first.map { "\($0.rejection)" }
        }
    }

    @Test("no invalid fixture's rejection repeats a personal value of its bad line", arguments: Fixtures.invalid)
    func invalidFixtures(name: String) async throws {
        let lines = try Fixtures.rawLines(name, invalid: true).map(\.bytes).filter {
            let text = String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            return !text.isEmpty && !text.hasPrefix("#")
        }
        let bad = try #require(lines.last)
        try await withLedger { ledger async throws in
            let reason = try #require(try Self.reason(context: Array(lines.dropLast()), bad: bad, ledger: ledger), "\(name) was not rejected")
            for value in Self.personalValues(of: bad) {
                #expect(!reason.contains(value), "\(name): the rejection repeats \(quoted(value)): \(reason)")
            }
        }
    }

    /// The cases of `Fixtures/hostile/*.cases`: each one's context lines and bad line, as bytes.
    static func hostileCases() throws -> [(kind: String, context: [[UInt8]], bad: [UInt8])] {
        let directory = Fixtures.directory.appendingPathComponent("hostile")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".cases") }.sorted()
        var cases: [(kind: String, context: [[UInt8]], bad: [UInt8])] = []
        for name in names {
            var kind: String?
            var lines: [[UInt8]] = []
            func finish() {
                if let kind, let bad = lines.last { cases.append((kind, Array(lines.dropLast()), bad)) }
                kind = nil
                lines = []
            }
            for line in try Data(contentsOf: directory.appendingPathComponent(name)).split(separator: 0x0A, omittingEmptySubsequences: false) {
                let bytes = Array(line)
                if bytes.starts(with: Array("# case: ".utf8)) {
                    finish()
                    kind = String(decoding: bytes.dropFirst(8), as: UTF8.self)
                } else if bytes.first == UInt8(ascii: "#") || bytes.isEmpty {
                    continue
                } else {
                    lines.append(bytes)
                }
            }
            finish()
        }
        return cases
    }

    @Test("no hostile-input case's rejection repeats a personal value of its bad line")
    func hostileCorpus() async throws {
        let cases = try Self.hostileCases()
        #expect(cases.count >= 200)
        let base = try Data(contentsOf: Fixtures.directory.appendingPathComponent("hostile/base.jsonl"))
            .split(separator: 0x0A).map(Array.init).filter { $0.first != UInt8(ascii: "#") }
        try await withLedger(mapSize: 1 << 24) { ledger async throws in
            try await ledger.append(try base.compactMap { try EventJSON.decode(line: $0) })
            var checked = 0
            for hostile in cases {
                let values = Self.personalValues(of: hostile.bad)
                guard !values.isEmpty, let reason = try Self.reason(context: hostile.context, bad: hostile.bad, ledger: ledger) else { continue }
                checked += 1
                for value in values {
                    #expect(!reason.contains(value), "\(hostile.kind): the rejection repeats \(quoted(value)): \(reason)")
                }
            }
            #expect(checked >= 100, "only \(checked) cases hold a personal value")
        }
    }

    @Test("a rejection through the Swift API does not repeat a name, a handle or a title")
    func swiftAPI() async throws {
        try await withLedger { ledger async throws in
            var name = PersonNameComponents()
            name.givenName = "Zelda\u{07}"
            let zelda = try CommunicationHandle(value: "zelda.moss@example.com", kind: .emailAddress)
            let named = try PermissionQuestion(communicationTopic: try CommunicationTopic(personInformation: [PersonInformation(handle: zelda, nameComponents: name)]))
            let rejected = await rejections { try await ledger.subject("kid-1").recordAsk(named) }
            let reason = try #require(rejected.first).rejection.description
            #expect(reason.hasPrefix("question.asked: question.topic.communication.people[0].name.givenName: holds U+0007"))
            #expect(!reason.contains("Zelda") && !reason.contains("zelda"))

            let other = try CommunicationHandle(value: "orbit-the-cat", kind: .custom)
            let error = #expect(throws: PermissionModelError.self) {
                try PermissionEvent.Payload.handlesObserved(checking: [zelda, zelda], known: [other])
            }
            #expect(error?.description == "known[0]: this custom handle is not among the checked handles; known must be a subset of checked")
        }
    }
}
