import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct FixtureTests {
    @Test func loadsAFileSkippingComments() throws {
        let fixture = try Fixture(contentsOf: Fixtures.url("late-answer.jsonl"))
        #expect(fixture.name == "late-answer.jsonl")
        #expect(fixture.events.map(\.id) == (1...7).map { "late-0\($0)" })
        // The header has 21 comment lines: the first event is on line 22.
        #expect(fixture.lines == Array(22...28))
        #expect(fixture.events[4].payload == .questionAnswered(
            questionID: UUID(uuidString: "6A3F1C2E-0005-4000-8000-000000000001")!, choiceID: "approve", via: .messages))
    }

    @Test func loadsAPathAndAStringAlike() throws {
        let path = Fixtures.url("several-handles.jsonl").path
        let fromPath = try Fixture(path: path)
        let fromString = try Fixture(jsonLines: String(contentsOfFile: path, encoding: .utf8), name: "several-handles.jsonl")
        #expect(fromPath == fromString)
        #expect(fromPath.events.count == 3)
    }

    @Test func acceptsBlankLinesCommentsAndCarriageReturns() throws {
        let text = """
            # a comment

               # an indented comment
            {"type":"permission.changed","id":"p-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"authorized"}\r

            {"type":"permission.changed","id":"p-2","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","permission":"camera","state":"denied"}
            """
        let fixture = try Fixture(jsonLines: text)
        #expect(fixture.events.map(\.id) == ["p-1", "p-2"])
        #expect(fixture.lines == [4, 6])
    }

    @Test func errorsNameEveryBadLine() throws {
        let text = """
            # line 1 is a comment
            {"type":"permission.changed","id":"p-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"authorized"}
            {"type":"permission.changed","id":"p-2","subject":"kid-1","occurredAt":"2026-11-20T09:01:00Z","permission":"webcam","state":"denied"}
            not json
            {"type":"permission.changed","id":"p-4","subject":"kid-1","occurredAt":"2026-11-20T09:02:00","permission":"camera","state":"denied"}
            """
        let error = try #require(throws: FixtureError.self) { try Fixture(jsonLines: text, name: "inline.jsonl") }
        #expect(error.problems.map(\.line) == [3, 4, 5])
        let lines = error.description.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("inline.jsonl:3: permission.changed: permission"), "\(lines[0])")
        #expect(lines[0].contains("webcam"))
        #expect(lines[1].hasPrefix("inline.jsonl:4: "))
        #expect(lines[2].hasPrefix("inline.jsonl:5: permission.changed: occurredAt"), "\(lines[2])")
    }

    @Test func aBrokenFixtureFileNamesItsLine() throws {
        let error = try #require(throws: FixtureError.self) {
            try Fixture(contentsOf: Fixtures.directory.appendingPathComponent("invalid/broken-json.jsonl"))
        }
        #expect(error.problems.map(\.line) == [6])
        #expect(error.description.hasPrefix("broken-json.jsonl:6: "))
        #expect(error.description.contains("not closed"))
    }

    @Test func aMissingFileIsAnErrorNamingIt() throws {
        let error = try #require(throws: FixtureError.self) { try Fixture(path: "/nonexistent/nothing.jsonl") }
        #expect(error.problems.first?.line == nil)
        #expect(error.description.hasPrefix("/nonexistent/nothing.jsonl: cannot read the file"))
    }

    @Test func fileNamesListTheFixturesOfADirectorySortedAndNotItsFolders() throws {
        let valid = try Fixture.fileNames(in: Fixtures.directory)
        #expect(valid.first == "approval-messages.jsonl")
        #expect(valid.contains("late-answer.jsonl"))
        #expect(valid == valid.sorted())
        #expect(valid.allSatisfy { $0.hasSuffix(".jsonl") }, "no README.md, .expected files or scripts: \(valid)")
        #expect(!valid.contains("invalid"), "the invalid/ folder is not a fixture")
        let invalid = try Fixture.fileNames(in: Fixtures.directory.appendingPathComponent("invalid"))
        #expect(invalid.contains("answer-after-cancel.jsonl"))
        #expect(Set(valid).isDisjoint(with: invalid))
        for name in valid { _ = try Fixture(contentsOf: Fixtures.url(name)) }

        // A folder whose name ends in .jsonl is not a fixture either.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("FixtureTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("folder.jsonl"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["b.jsonl", "a.jsonl", "notes.md", "c.jsonl.bak"] {
            try Data().write(to: directory.appendingPathComponent(name))
        }
        #expect(try Fixture.fileNames(in: directory) == ["a.jsonl", "b.jsonl"])
    }

    @Test func fileNamesOfAMissingDirectoryIsAnErrorNamingIt() throws {
        let error = try #require(throws: FixtureError.self) { try Fixture.fileNames(in: URL(fileURLWithPath: "/nonexistent/Fixtures")) }
        #expect(error.problems.first?.line == nil)
        #expect(error.description.hasPrefix("/nonexistent/Fixtures: cannot read the directory"), "\(error)")
    }

    @Test func jsonLinesIsTheNormalizedForm() throws {
        let fixture = try Fixture(contentsOf: Fixtures.url("several-handles.jsonl"))
        let again = try Fixture(jsonLines: fixture.jsonLines)
        #expect(again.events == fixture.events)
        #expect(fixture.jsonLines.contains("\"+14155550132\""))
        #expect(fixture.jsonLines.split(separator: "\n").count == 3)
    }
}
