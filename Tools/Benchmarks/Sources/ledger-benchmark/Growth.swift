import Foundation

// The growth part of the suite: how storage, `import`, `verify` and `known-handles` grow with the number of
// handles, all of one subject and the same number spread over many subjects. Each is the shipped tool run as
// an operator would, on a JSON Lines file, timed (the median of --growth-runs runs), with its peak resident
// memory from GNU time.

/// The tool's costs on one input.
struct GrowthRow {
    var spread: String
    var handles: Int
    var inputBytes: Int
    var dataFileBytes: Int
    var importRun: ToolRun
    var verifyRun: ToolRun
    var knownHandlesJSON: ToolRun
    var knownHandlesTable: ToolRun

    var peakBytes: Int { [importRun, verifyRun, knownHandlesJSON, knownHandlesTable].map(\.peakBytes).max() ?? 0 }
}

/// One run of the tool: the seconds it took and its peak resident memory (`nil` without GNU time).
struct ToolRun {
    var seconds: Double
    var peakBytes: Int
}

/// `run` done `count` times: the median time and the largest peak. A single run of a short command varies by
/// half its time from one run to the next; the ratios of the growth targets divide by the shortest.
func median(of count: Int, _ run: () throws -> ToolRun) throws -> ToolRun {
    var runs: [ToolRun] = []
    for _ in 0..<count { runs.append(try run()) }
    let times = runs.map(\.seconds).sorted()
    let middle = times.count / 2
    return ToolRun(seconds: times.count % 2 == 1 ? times[middle] : (times[middle - 1] + times[middle]) / 2,
                   peakBytes: runs.map(\.peakBytes).max() ?? 0)
}

/// Runs `tool arguments` with standard output to /dev/null, under GNU time when it is there; stops the suite
/// when the tool fails.
func runTool(_ tool: String, _ arguments: [String]) throws -> ToolRun {
    let gnuTime = "/usr/bin/time"
    let peakFile = NSTemporaryDirectory() + "ledger-benchmark-peak-\(getpid())"
    try? FileManager.default.removeItem(atPath: peakFile)
    let timed = FileManager.default.isExecutableFile(atPath: gnuTime)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: timed ? gnuTime : tool)
    process.arguments = (timed ? ["-f", "%M", "-o", peakFile, tool] : []) + arguments
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    let start = now()
    try process.run()
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = now() - start
    guard process.terminationStatus == 0 else {
        print("\(tool) \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus): \(String(decoding: message, as: UTF8.self))")
        exit(1)
    }
    defer { try? FileManager.default.removeItem(atPath: peakFile) }
    let kib = timed ? ((try? String(contentsOfFile: peakFile, encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline).last.flatMap { Int($0) } : nil
    return ToolRun(seconds: seconds, peakBytes: (kib ?? 0) * 1024)
}

/// Writes a JSON Lines file of `handles.observed` events giving `subjects` subjects `handles` distinct phone
/// numbers in all (as evenly as they divide), at most `perEvent` to an event, every one checked and known.
/// Returns the file's size in bytes.
func writeHandleWorkload(to path: String, handles: Int, subjects: Int, perEvent: Int = 10_000) throws -> Int {
    guard FileManager.default.createFile(atPath: path, contents: nil) else { throw POSIXError(.EACCES) }
    guard let file = FileHandle(forWritingAtPath: path) else { throw POSIXError(.EACCES) }
    defer { try? file.close() }
    let formatter = ISO8601DateFormatter()
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    var buffer = Data()
    var event = 0
    var next = 0
    for subject in 0..<subjects {
        let count = handles / subjects + (subject < handles % subjects ? 1 : 0)
        var given = 0
        while given < count {
            let batch = min(perEvent, count - given)
            let list = (next..<(next + batch)).map { "{\"value\":\"+1555\(String(format: "%07d", $0))\",\"kind\":\"phoneNumber\"}" }
                .joined(separator: ",")
            let time = formatter.string(from: start.addingTimeInterval(Double(event)))
            buffer.append(Data("""
                {"type":"handles.observed","id":"growth-\(event)","subject":"kid-\(subject)","occurredAt":"\(time)",\
                "recordedAt":"\(time)","checked":[\(list)],"known":[\(list)]}\n
                """.utf8))
            if buffer.count >= 1 << 20 {
                try file.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
            event += 1
            next += batch
            given += batch
        }
    }
    try file.write(contentsOf: buffer)
    return Int(try file.offset())
}

/// Imports, verifies and lists the known handles of every size of `options.growthHandles`, all of one subject and
/// spread over `options.growthSubjects` subjects; prints the table and returns the figures the targets are about.
func measureGrowth(_ options: SuiteOptions) throws -> [Figure] {
    guard let tool = options.tool, FileManager.default.isExecutableFile(atPath: tool) else {
        log("  growth: skipped, it needs the tool (--tool)")
        return []
    }
    let folder = options.directory + "/growth"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var rows: [GrowthRow] = []
    for (spread, subjects) in [("one subject", 1), ("\(options.growthSubjects.formatted()) subjects", options.growthSubjects)] {
        for handles in options.growthHandles {
            let input = folder + "/input.jsonl", ledger = folder + "/ledger"
            try? FileManager.default.removeItem(atPath: ledger)
            log("  \(spread), \(handles.formatted()) handles …")
            let inputBytes = try writeHandleWorkload(to: input, handles: handles, subjects: subjects)
            let runs = options.growthRuns
            let importRun = try median(of: runs) { () throws -> ToolRun in
                try? FileManager.default.removeItem(atPath: ledger)
                return try runTool(tool, ["import", "--ledger", ledger, input])
            }
            let dataFile = try FileManager.default.attributesOfItem(atPath: ledger + "/data.mdb")[.size] as? Int ?? 0
            let verifyRun = try median(of: runs) { try runTool(tool, ["verify", "--ledger", ledger]) }
            let query = ["known-handles", "--ledger", ledger, "--subject", "kid-0"]
            let json = try median(of: runs) { try runTool(tool, query + ["--format", "json"]) }
            let table = try median(of: runs) { try runTool(tool, query + ["--format", "table"]) }
            rows.append(GrowthRow(spread: spread, handles: handles, inputBytes: inputBytes, dataFileBytes: dataFile,
                                  importRun: importRun, verifyRun: verifyRun, knownHandlesJSON: json, knownHandlesTable: table))
            try? FileManager.default.removeItem(atPath: ledger)
        }
    }
    printGrowthTable(rows, runs: options.growthRuns)
    return growthFigures(rows)
}

func printGrowthTable(_ rows: [GrowthRow], runs: Int) {
    func mib(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
    func run(_ r: ToolRun) -> String { String(format: "%.2f s, %@ MiB", r.seconds, mib(r.peakBytes)) }
    print("")
    print("Growth with the number of handles (the tool on a JSON Lines file, the median time of \(runs) run\(runs == 1 ? "" : "s") and the largest peak; `known-handles` of one subject, kid-0)")
    print("")
    print("| handles | input MiB | data file MiB | data / input | import | verify | known-handles (JSON) | known-handles (table) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows {
        print("| \(r.spread), \(r.handles.formatted()) | \(mib(r.inputBytes)) | \(mib(r.dataFileBytes)) | "
            + String(format: "%.2f", Double(r.dataFileBytes) / Double(r.inputBytes))
            + " | \(run(r.importRun)) | \(run(r.verifyRun)) | \(run(r.knownHandlesJSON)) | \(run(r.knownHandlesTable)) |")
    }
}

/// For each spread: the largest size against the smallest (time and size at most 10× for 8× the handles), the
/// peak memory (under 1 GiB) and the data file against its input (at most 3×).
func growthFigures(_ rows: [GrowthRow]) -> [Figure] {
    var figures: [Figure] = []
    var spreads: [String] = []
    for row in rows where !spreads.contains(row.spread) { spreads.append(row.spread) }
    for spread in spreads {
        let of = rows.filter { $0.spread == spread }.sorted { $0.handles < $1.handles }
        guard let small = of.first, let large = of.last, large.handles > small.handles else { continue }
        let scale = "\(large.handles.formatted()) / \(small.handles.formatted()) handles"
        let measures: [(String, String, (GrowthRow) -> Double)] = [
            ("import", "s", { $0.importRun.seconds }), ("verify", "s", { $0.verifyRun.seconds }),
            ("known-handles, JSON", "s", { $0.knownHandlesJSON.seconds }), ("known-handles, table", "s", { $0.knownHandlesTable.seconds }),
            ("data file", "MiB", { Double($0.dataFileBytes) / 1_048_576 }),
        ]
        for (name, unit, value) in measures {
            let ratio = value(large) / value(small)
            figures.append(Figure(workload: "growth, \(spread), \(large.handles.formatted()) handles: \(name)", unit: unit,
                                  ledger: value(large), baseline: value(small), ratio: ratio, ratioName: scale,
                                  target: "≤ 10", met: ratio <= 10))
        }
        let peak = of.map(\.peakBytes).max() ?? 0
        figures.append(Figure(workload: "growth, \(spread): peak resident memory of import, verify, known-handles", unit: "MiB",
                              ledger: Double(peak) / 1_048_576, target: "< 1024", met: peak > 0 ? peak < 1 << 30 : nil,
                              note: peak > 0 ? "" : "not measured: no GNU time (/usr/bin/time)"))
        let worst = of.map { Double($0.dataFileBytes) / Double($0.inputBytes) }.max() ?? 0
        figures.append(Figure(workload: "growth, \(spread): data file / JSON Lines input, largest", unit: "×",
                              ledger: worst, target: "≤ 3", met: worst <= 3))
    }
    return figures
}
