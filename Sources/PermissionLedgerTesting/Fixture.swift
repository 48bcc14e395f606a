import Foundation
import PermissionLedger
import PermissionModel

/// A scenario of permission events in the JSON Lines form of docs/spec/EVENTS.md, read from a file or a string.
///
/// Blank lines and `#` comments are skipped; every other line must decode as an event. The line each event
/// came from is kept, so that a rejection at replay names the line, as the `permission-ledger` tool does.
///
/// ```swift
/// let fixture = try Fixture(path: "Fixtures/late-answer.jsonl")
/// let q1 = UUID(uuidString: "6A3F1C2E-0005-4000-8000-000000000001")!
/// try fixture.replay { replayed in
///     replayed.expectQuestion(q1, state: .approved, late: true)
///     replayed.expectQuestion(q1, state: .expired, asOf: .seq(4))
/// }
/// ```
public struct Fixture: Hashable, Sendable {
    /// The events, in the order of the lines they came from.
    public var events: [PermissionEvent]
    /// The 1-based line of each event (`lines[i]` is where `events[i]` was read).
    public var lines: [Int]
    /// What the fixture is called in messages: the file's name, or the name given for a string.
    public var name: String

    /// A fixture made of events already in hand; event `i` is said to be on line `i + 1`.
    public init(events: [PermissionEvent], name: String = "events") {
        self.events = events
        self.lines = Array(events.indices.map { $0 + 1 })
        self.name = name
    }

    /// Reads a fixture from JSON Lines text.
    ///
    /// - Parameters:
    ///   - jsonLines: one event per line; blank lines and lines starting with `#` are skipped.
    ///   - name: how messages call the text (`NAME:LINE: reason`).
    /// - Throws: ``FixtureError`` listing every line that does not decode, each with its line number.
    public init(jsonLines: String, name: String = "<string>") throws(FixtureError) {
        try self.init(bytes: Array(jsonLines.utf8), name: name)
    }

    /// Reads a fixture file.
    ///
    /// - Throws: ``FixtureError`` when the file cannot be read, or listing every line that does not decode.
    public init(contentsOf url: URL) throws(FixtureError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FixtureError(name: url.path, problems: [.init(line: nil, reason: "cannot read the file: \(error.localizedDescription)")])
        }
        try self.init(bytes: Array(data), name: url.lastPathComponent)
    }

    /// Reads a fixture file at a path. A relative path is taken from the working directory, which `swift test`
    /// sets to the package's root; where a test runner sets another (Xcode, say), build the path from the test
    /// file's `#filePath` instead, or use ``init(contentsOf:)``.
    ///
    /// - Throws: ``FixtureError`` when the file cannot be read, or listing every line that does not decode.
    public init(path: String) throws(FixtureError) {
        try self.init(contentsOf: URL(fileURLWithPath: path))
    }

    private init(bytes: [UInt8], name: String) throws(FixtureError) {
        var events: [PermissionEvent] = []
        var lines: [Int] = []
        var problems: [FixtureError.Problem] = []
        var start = 0
        var number = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            number += 1
            do {
                if let event = try EventJSON.decode(line: bytes[start..<end]) {
                    events.append(event)
                    lines.append(number)
                }
            } catch {
                problems.append(.init(line: number, reason: error.description))
            }
            start = end + 1
        }
        guard problems.isEmpty else { throw FixtureError(name: name, problems: problems) }
        self.events = events
        self.lines = lines
        self.name = name
    }

    /// The names of the fixture files in a directory: its `*.jsonl` files, sorted. Subdirectories are not
    /// searched, so a library that keeps its rejected scenarios in a folder of their own lists them apart.
    ///
    /// For a test that runs on every fixture of a library:
    ///
    /// ```swift
    /// static let library = URL(fileURLWithPath: "Fixtures")
    ///
    /// @Test(arguments: try Fixture.fileNames(in: library))
    /// func everyFixtureReplays(name: String) throws {
    ///     try Fixture(contentsOf: library.appendingPathComponent(name)).replay { replayed in
    ///         #expect(try replayed.ledger.verify().isIntact)
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: ``FixtureError`` when the directory cannot be read, so that a misplaced library fails the
    ///   test instead of giving it nothing to run on.
    public static func fileNames(in directory: URL) throws(FixtureError) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw FixtureError(name: directory.path, problems: [.init(line: nil, reason: "cannot read the directory: \(error.localizedDescription)")])
        }
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return name.hasSuffix(".jsonl")
                && FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.sorted()
    }

    /// The fixture as JSON Lines, one event per line, in the normalized form `export` writes.
    ///
    /// Comments and blank lines of the source are not kept, so event `i` is on line `i + 1` of the result.
    public var jsonLines: String {
        events.map { EventJSON.encode($0) + "\n" }.joined()
    }
}

/// Why a fixture could not be read or replayed: each problem with the line it is on.
///
/// Its description has one `NAME:LINE: reason` line per problem, as the `permission-ledger` tool reports them.
public struct FixtureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One bad line, or a problem with the whole fixture (`line` is `nil`).
    public struct Problem: Hashable, Sendable {
        /// The 1-based line, when the problem is on one.
        public var line: Int?
        /// What is wrong, naming the field.
        public var reason: String

        /// Creates a problem on `line` (`nil`: with the whole fixture).
        public init(line: Int?, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// The fixture's name (its file name, or the name given for a string).
    public var name: String
    /// Every problem found, in line order.
    public var problems: [Problem]

    /// Creates an error about the fixture called `name`.
    public init(name: String, problems: [Problem]) {
        self.name = name
        self.problems = problems
    }

    /// One `NAME:LINE: reason` line per problem (`NAME: reason` for a problem with no line), in order.
    public var description: String {
        problems.map { problem in
            problem.line.map { "\(name):\($0): \(problem.reason)" } ?? "\(name): \(problem.reason)"
        }.joined(separator: "\n")
    }
}
