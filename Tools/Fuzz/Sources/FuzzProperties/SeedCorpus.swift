import Foundation
@_spi(StorageEngine) import PermissionLedger

/// The seed corpora, written from JSON Lines files (the fixtures) before a run.
public enum SeedCorpus {
    /// What a target's seeds are.
    public enum Kind: Sendable {
        /// Every non-blank line, as it is.
        case lines
        /// The stored record of every line that parses to an event (`recordedAt` defaults to `occurredAt`).
        case records
    }

    /// With `--write-seeds DIR FILE...` as the first arguments: writes the seeds of `kind` from the files
    /// into DIR, one file a seed named after its file and line (`decline.jsonl.7`), and exits. Otherwise
    /// returns, and libFuzzer reads the arguments. Call it from `LLVMFuzzerInitialize`, which libFuzzer
    /// calls before it reads its flags.
    public static func writeIfAsked(_ kind: Kind, arguments: [String]) {
        guard arguments.count >= 2, arguments[1] == "--write-seeds" else { return }
        guard arguments.count >= 3 else {
            FileHandle.standardError.write(Data("usage: \(arguments[0]) --write-seeds DIR FILE.jsonl...\n".utf8))
            exit(2)
        }
        do {
            let count = try write(kind, into: arguments[2], from: Array(arguments.dropFirst(3)))
            print("\(count) seeds in \(arguments[2])")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("\(arguments[0]): \(error)\n".utf8))
            exit(1)
        }
    }

    /// Writes the seeds and returns how many.
    public static func write(_ kind: Kind, into directory: String, from files: [String]) throws -> Int {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var count = 0
        for file in files {
            let contents = try Data(contentsOf: URL(fileURLWithPath: file))
            let name = URL(fileURLWithPath: file).lastPathComponent
            for (index, line) in contents.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
                guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { continue }
                let seed: [UInt8]
                switch kind {
                case .lines:
                    seed = Array(line)
                case .records:
                    guard let event = try? EventJSON.decode(line: line) else { continue }
                    seed = EventRecord.encode(event, recordedAt: event.recordedAt ?? event.occurredAt)
                }
                let path = (directory as NSString).appendingPathComponent("\(name).\(index + 1)")
                try Data(seed).write(to: URL(fileURLWithPath: path))
                count += 1
            }
        }
        return count
    }
}

/// The arguments libFuzzer hands `LLVMFuzzerInitialize`, as strings.
public func fuzzerArguments(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> [String] {
    guard let vector = argv.pointee else { return [] }
    return (0..<Int(argc.pointee)).compactMap { vector[$0].map { String(cString: $0) } }
}
