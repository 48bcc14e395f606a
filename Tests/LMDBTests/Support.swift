import Foundation
import LMDB

/// Runs `body` with the path of a fresh temporary directory, removed afterwards.
@discardableResult
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("LMDBTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url.path)
}

/// Runs `body` with a fresh writable environment and a database named "test" in it.
@discardableResult
func withEnvironment<T>(
    _ options: Environment.Options = .init(durable: false), _ body: (Environment, Database) throws -> T
) throws -> T {
    try withTemporaryDirectory { path throws in
        let env = try Environment(path: path, options: options)
        return try body(env, try env.openDatabase("test", create: true))
    }
}

func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

func string(_ buffer: UnsafeRawBufferPointer?) -> String? {
    buffer.map { String(decoding: $0, as: UTF8.self) }
}

/// A 16-byte big-endian key, so that numeric order is key order.
func key(_ n: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt64(n).bigEndian) { Array(repeating: 0, count: 8) + Array($0) }
}

/// Runs `body(index)` on `count` threads at once and rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let errors = Locked<[any Error]>([])
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            defer { group.leave() }
            do { try body(index) } catch { errors.withLock { $0.append(error) } }
        }.start()
    }
    group.wait()
    if let error = errors.withLock({ $0.first }) { throw error }
}

final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
