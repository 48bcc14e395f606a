import Foundation

// `ledger-benchmark compare`: the suite's figures of two builds side by side, from the JSON files of runs made
// in turns on one machine (Tools/benchmark.sh --baseline REF does that): for each workload, the median of each
// build's runs, their spread, and the ratio of the medians.

/// `ledger-benchmark compare --baseline A.json[,B.json…] --current C.json[,D.json…] [--baseline-name NAME]`
func runCompare(_ arguments: [String]) throws {
    var baselineFiles: [String] = []
    var currentFiles: [String] = []
    var baselineName = "baseline"
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--baseline": baselineFiles = (iterator.next() ?? "").split(separator: ",").map(String.init)
        case "--current": currentFiles = (iterator.next() ?? "").split(separator: ",").map(String.init)
        case "--baseline-name": baselineName = iterator.next() ?? baselineName
        default:
            print("usage: ledger-benchmark compare --baseline A.json[,B.json…] --current C.json[,D.json…] [--baseline-name NAME]")
            exit(2)
        }
    }
    guard !baselineFiles.isEmpty, !currentFiles.isEmpty else {
        print("compare needs --baseline and --current, each a list of the suite's JSON files")
        exit(2)
    }
    let baseline = try figures(in: baselineFiles)
    let current = try figures(in: currentFiles)
    print("")
    print("The same workloads, \(baselineName) (\(baselineFiles.count) runs) and this build (\(currentFiles.count) runs), in turns")
    print("")
    print("| Workload | Unit | \(baselineName): median (range) | this build: median (range) | this / \(baselineName) |")
    print("|---|---|---:|---:|---:|")
    for (workload, unit) in current.order {
        guard let now = current.values[workload], let before = baseline.values[workload] else { continue }
        let (b, c) = (median(before), median(now))
        print("| \(workload) | \(unit) | \(summary(before)) | \(summary(now)) | " + String(format: "%.2f×", c / b) + " |")
    }
}

/// Each workload's `ledger` figures across the files, in the order of the first file.
private func figures(in files: [String]) throws -> (order: [(String, String)], values: [String: [Double]]) {
    var order: [(String, String)] = []
    var values: [String: [Double]] = [:]
    for file in files {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = object["figures"] as? [[String: Any]] else {
            print("\(file): not a JSON file of the suite")
            exit(1)
        }
        for figure in list {
            guard let workload = figure["workload"] as? String, let value = figure["ledger"] as? Double else { continue }
            if values[workload] == nil { order.append((workload, figure["unit"] as? String ?? "")) }
            values[workload, default: []].append(value)
        }
    }
    return (order, values)
}

private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

private func summary(_ values: [Double]) -> String {
    func number(_ value: Double) -> String { value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value) }
    let m = median(values)
    guard values.count > 1, let low = values.min(), let high = values.max() else { return number(m) }
    return "\(number(m)) (\(number(low))–\(number(high)))"
}
