import Foundation
import Testing

/// What reader threads saw, in the order each saw it.
private final class Observations: @unchecked Sendable {
    private let lock = NSLock()
    private var runs: [String: [ToolRun]] = [:]
    private var failures: [String] = []

    func add(_ run: ToolRun, reader: String) {
        lock.withLock { runs[reader, default: []].append(run) }
    }

    func fail(_ message: String) {
        lock.withLock { failures.append(message) }
    }

    func runs(of reader: String) -> [ToolRun] { lock.withLock { runs[reader] ?? [] } }
    var problems: [String] { lock.withLock { failures } }
}

/// The `asOf` of a query's JSON.
private func asOf(_ run: ToolRun) throws -> (seq: Int, time: String) {
    let point = try run.json().object("asOf")
    return (try #require(point.int("seq"), "\(run)"), try #require(point.string("time"), "\(run)"))
}

/// Whether two listings of the same questions agree, but for questions that one of them sees as expired by its
/// clock and the other as still pending: a read without --as-of runs its clock at now, `--as-of seq:N` at
/// event N's recordedAt. Returns the first disagreement.
private func disagreement(_ seen: [[String: Any]], _ later: [[String: Any]]) -> String? {
    guard seen.map({ $0.string("id") ?? "" }) == later.map({ $0.string("id") ?? "" }) else {
        return "different questions: \(seen.count) seen, \(later.count) as of the same seq"
    }
    for (a, b) in zip(seen, later) where canonicalJSON(a) != canonicalJSON(b) {
        var (x, y) = (a, b)
        let states = Set([a.string("state"), b.string("state")].compactMap { $0 })
        if states == ["pending", "expired"], let expiresAt = a.string("expiresAt"), !a.isNull("expiresAt") {
            // Expired by the clock alone: resolvedAt is expiresAt; otherwise identical.
            let expired = a.string("state") == "expired" ? a : b
            guard expired.string("resolvedAt") == expiresAt else { return "\(a.string("id") ?? ""): \(canonicalJSON(a)) vs \(canonicalJSON(b))" }
            for key in ["state", "resolvedAt"] { x[key] = nil; y[key] = nil }
        }
        if canonicalJSON(x) != canonicalJSON(y) {
            return "\(a.string("id") ?? ""): \(canonicalJSON(a)) vs \(canonicalJSON(b))"
        }
    }
    return nil
}

@Suite("reading while writing", .timeLimit(.minutes(10)))
struct ConcurrentReadTests {
    @Test("readers in other processes never fail and see only whole transactions, each what a later read as of that seq gives")
    func readersSeeCommittedTransactions() throws {
        try withSandbox { sandbox in
            // family-day.jsonl in chunks of 20 events: each import of a chunk is one transaction.
            let lines = try fixtureEventLines("family-day.jsonl")
            try #require(lines.count == 1200)
            let chunkSize = 20
            let chunks = try sandbox.chunks(of: lines, size: chunkSize)
            let boundaries = Set(stride(from: chunkSize, through: lines.count, by: chunkSize))
            // The first chunk makes the ledger, so that no reader finds it missing.
            let ledger = try sandbox.ledger(importing: chunks[0])

            // The writer: one shell running an import per chunk, one after another.
            let writer = try sandbox.importer(chunks.dropFirst(), into: ledger)
            let writerOut = URL(fileURLWithPath: try sandbox.write("", to: "writer.out"))
            let writerErr = URL(fileURLWithPath: try sandbox.write("", to: "writer.err"))
            let outHandle = try FileHandle(forWritingTo: writerOut)
            let errHandle = try FileHandle(forWritingTo: writerErr)
            defer {
                try? outHandle.close()
                try? errHandle.close()
            }
            writer.standardOutput = outHandle
            writer.standardError = errHandle
            let finished = Flag()
            let exited = DispatchSemaphore(value: 0)
            writer.terminationHandler = { _ in
                finished.set()
                exited.signal()
            }

            // Two readers, each in its own thread, each running the tool over and over while the writer runs.
            let observations = Observations()
            let readers = DispatchGroup()
            let maxReads = 15
            let queries: [(name: String, arguments: [String])] = [
                ("digest", ["digest", "--ledger", ledger, "--format", "json"]),
                ("questions", ["questions", "--ledger", ledger, "--format", "json"]),
            ]
            for query in queries {
                DispatchQueue.global().async(group: readers) {
                    var reads = 0
                    while reads < maxReads && !finished.isSet {
                        do {
                            observations.add(try sandbox.run(query.arguments), reader: query.name)
                        } catch {
                            observations.fail("\(query.name): \(error)")
                            return
                        }
                        reads += 1
                    }
                }
            }
            try spawn(writer)
            defer { if writer.isRunning { writer.terminate() } }

            // Deadlines for a hang, not for speed: on a loaded machine each of the writer's 59 imports, each flushed
            // to disk, may take a second or more.
            let readersDone = readers.wait(timeout: .now() + 240) == .success
            #expect(readersDone, "the readers did not finish within 4 minutes")
            let writerDone = exited.wait(timeout: .now() + 240) == .success
            try #require(writerDone, "the writer did not finish within 4 minutes")
            try #require(readersDone)
            let writerOutput = String(decoding: try Data(contentsOf: writerOut), as: UTF8.self)
            let writerErrors = String(decoding: try Data(contentsOf: writerErr), as: UTF8.self)
            try #require(writer.terminationStatus == 0, "the writer failed: \(writerOutput)\n\(writerErrors)")
            #expect(writerOutput.split(separator: "\n").last?.contains("head seq 1200") == true, "\(writerOutput)")
            #expect(observations.problems.isEmpty, "\(observations.problems)")
            #expect(try sandbox.json(["verify", "--ledger", ledger]).int("events") == 1200)

            // Every read succeeded and saw a committed transaction's end, never going back.
            var seen: [String: [(seq: Int, run: ToolRun)]] = [:]
            for query in queries {
                let runs = observations.runs(of: query.name)
                #expect(!runs.isEmpty, "\(query.name) read at least once")
                for run in runs {
                    #expect(run.status == 0 && !run.crashed, "a reader failed while the writer ran: \(run)")
                    #expect(run.stderr.isEmpty, "\(run)")
                    guard run.status == 0 else { continue }
                    let seq = try asOf(run).seq
                    #expect(boundaries.contains(seq), "\(query.name) saw seq \(seq), which no transaction ended at (a torn read)")
                    seen[query.name, default: []].append((seq, run))
                }
                let seqs = seen[query.name, default: []].map(\.seq)
                #expect(seqs == seqs.sorted(), "\(query.name) never sees an earlier head than it saw before: \(seqs)")
            }

            // Each digest read is what digest --as-of seq:N gives now (without --as-of it is taken as of the head).
            var checked: Set<Int> = []
            for (seq, run) in seen["digest", default: []] where checked.insert(seq).inserted {
                let later = try sandbox.run(["digest", "--ledger", ledger, "--as-of", "seq:\(seq)", "--format", "json"])
                #expect(later.status == 0, "\(later)")
                #expect(run.out == later.out, "the digest read at seq \(seq) differs from digest --as-of seq:\(seq):\n\(run.out)\(later.out)")
            }

            // Each questions read lists the questions as of its seq (up to what its later clock expired).
            checked = []
            for (seq, run) in seen["questions", default: []] where checked.insert(seq).inserted {
                let later = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:\(seq)"])
                let laterList = try later.objects("questions")
                #expect(laterList.count == lines.prefix(seq).filter { $0.contains(#""type":"question.asked""#) }.count)
                if let problem = disagreement(try run.json().objects("questions"), laterList) {
                    Issue.record("the questions read at seq \(seq) differ from questions --as-of seq:\(seq): \(problem)")
                }
            }

            // Once the writer is done, readers see all of it.
            let finalDigest = try sandbox.run(queries[0].arguments)
            #expect(try asOf(finalDigest).seq == 1200)
            let finalQuestions = try sandbox.run(queries[1].arguments)
            #expect(try asOf(finalQuestions).seq == 1200)
            #expect(try finalQuestions.json().objects("questions").count == 375)
        }
    }
}
