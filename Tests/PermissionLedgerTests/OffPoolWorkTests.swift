import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// What grows with the log runs off the cooperative pool, stops when its task is cancelled, and reports progress.
@Suite struct OffPoolWorkTests {
    /// `count` permission changes over 50 subjects, appended in batches.
    static func fill(_ ledger: Ledger, events count: Int) throws {
        let start = Timestamp(microseconds: 1_795_000_000_000_000)
        var batch: [PermissionEvent] = []
        for i in 0..<count {
            batch.append(PermissionEvent(
                id: "p\(i)", subject: "kid-\(i % 50)", occurredAt: Timestamp(microseconds: start.microseconds + Int64(i)),
                recordedAt: Timestamp(microseconds: start.microseconds + Int64(i)),
                payload: .permissionChanged(SystemPermission.allCases[i % 5], state: i % 2 == 0 ? .authorized : .denied, cause: .settings)))
            if batch.count == 5_000 {
                try ledger.appendSynchronously(batch)
                batch.removeAll()
            }
        }
        if !batch.isEmpty { try ledger.appendSynchronously(batch) }
    }

    /// Counts ticks of 5 ms sleeps on the cooperative pool until stopped.
    final class Ticker: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var ticks: Int { lock.withLock { count } }
        func tick() { lock.withLock { count += 1 } }
    }

    /// A task executor with one thread of its own: tasks that prefer it run there and nowhere else, so that a
    /// task blocking it is seen whatever the rest of the test run does to the global pool.
    final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
        private let queue = DispatchQueue(label: "OffPoolWorkTests.one-thread-executor")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test("verify on a large ledger leaves the thread of its task free: other tasks keep running meanwhile")
    func verifyDoesNotBlockThePool() async throws {
        try await withLedger(mapSize: 64 << 20) { ledger async throws in
            try Self.fill(ledger, events: 5_000)
            // The ticker and the task that verifies share one thread, as tasks share the cooperative pool's
            // few. Halfway through the log the verification waits, on its own thread, for the ticker to tick:
            // had it run on the task's thread, the ticker could not tick until it was over, and the wait would
            // end only at its deadline. No timing is measured: the deadline is reached only when it is broken.
            let executor = OneThreadExecutor()
            let ticker = Ticker()
            let tick = Task(executorPreference: executor) {
                while !Task.isCancelled {
                    ticker.tick()
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            let ticksDuringVerification = Progress()
            let report = try await withTaskExecutorPreference(executor) {
                try await ledger.verify { stage, seq in
                    guard stage == .log, seq == 2_500 else { return }
                    let before = ticker.ticks
                    let deadline = Date().addingTimeInterval(30)
                    while ticker.ticks < before + 3, Date() < deadline { usleep(1_000) }
                    ticksDuringVerification.report(UInt64(ticker.ticks - before))
                }
            }
            tick.cancel()
            #expect(report.isIntact)
            #expect(ticksDuringVerification.seq >= 3, "the ticker ticked \(ticksDuringVerification.seq) times while verify waited for it")
        }
    }

    /// The last position a progress callback reported.
    final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var last: UInt64 = 0
        private var reported = 0
        var seq: UInt64 { lock.withLock { last } }
        var reports: Int { lock.withLock { reported } }
        func report(_ seq: UInt64) { lock.withLock { last = seq; reported += 1 } }
    }

    @Test("cancelling verify stops it soon after, partway through the log, with CancellationError")
    func cancellingVerifyReturnsPromptly() async throws {
        try await withLedger(mapSize: 64 << 20) { ledger async throws in
            try Self.fill(ledger, events: 20_000)
            let progress = Progress()
            let started = AsyncStream<Void>.makeStream()
            let cancelled = DispatchSemaphore(value: 0)
            let verification = Task {
                try await ledger.verify { stage, seq in
                    guard stage == .log else { return }
                    progress.report(seq)
                    if seq == 1_000 {
                        // Waits, on the verifying thread, until the task is cancelled.
                        started.continuation.yield()
                        cancelled.wait()
                    }
                }
            }
            for await _ in started.stream { break }
            verification.cancel()
            cancelled.signal()
            await #expect(throws: CancellationError.self) { _ = try await verification.value }
            // It looks at cancellation every 1,024 steps: it stopped long before the end of the log.
            #expect(progress.seq <= 1_000 + 2 * 1_024, "verify went on to seq \(progress.seq) after it was cancelled at seq 1,000")
            // And the ledger is unharmed, and can be verified again.
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test("cancelling a rebuild changes nothing; a rebuild reports its progress up to the whole log")
    func rebuildReportsProgressAndCancels() async throws {
        try await withLedger(mapSize: 64 << 20) { ledger async throws in
            try Self.fill(ledger, events: 6_000)
            let digest = try await ledger.digest()
            let progress = Progress()
            let started = AsyncStream<Void>.makeStream()
            let cancelled = DispatchSemaphore(value: 0)
            let rebuild = Task {
                try await ledger.rebuildProjections { step in
                    progress.report(step.completed)
                    if step.completed == 1_024 {
                        started.continuation.yield()
                        cancelled.wait()
                    }
                }
            }
            for await _ in started.stream { break }
            rebuild.cancel()
            cancelled.signal()
            await #expect(throws: CancellationError.self) { try await rebuild.value }
            #expect(progress.seq == 1_024)
            #expect(try await ledger.digest() == digest)
            #expect(try await ledger.verify().isIntact)

            let whole = Progress()
            try await ledger.rebuildProjections { whole.report($0.completed) }
            #expect(whole.seq == 6_000)
            #expect(whole.reports == 6_000 / 1_024 + 1)
            #expect(try await ledger.digest() == digest)
        }
    }

    @Test("forEachEvent, export, statistics and backup: async, the same as on the calling thread")
    func asyncScansEqualTheirSynchronousForms() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try await Ledger.open(path: directory + "/ledger", options: .init(mapSize: 16 << 20, durable: false))
            try Self.fill(ledger, events: 2_500)
            let collected = Collected()
            try await ledger.forEachEvent(after: 100) { collected.add(EventJSON.encode($0) + "\n") }
            #expect(collected.text == (try exportText(ledger, after: 100)))
            let exported = Collected()
            try await ledger.export { exported.add($0) }
            #expect(exported.text == (try exportText(ledger)))

            let statistics = try await ledger.statistics(asOf: .seq(2_000))
            #expect(statistics.events == 2_000)
            #expect(statistics.subjects == 50)
            #expect(statistics.sizes.fileBytes > 0 && statistics.sizes.usedBytes > 0)
            #expect(statistics.sizes.usedBytes <= statistics.sizes.mapBytes)
            #expect(statistics.description.hasPrefix("2,000 events as of seq 2000 (head seq 2500, recorded "))
            #expect(statistics.description.contains("permission.changed 2,000"))
            #expect(statistics.description.contains("50 subjects; 0 questions"))

            let head = try await ledger.backup(to: directory + "/copy")
            #expect(head.seq == 2_500)
            await ledger.close()
            let copy = try await Ledger.open(path: directory + "/copy", options: .init(readOnly: true))
            #expect(try await copy.digest() == (try await Ledger.open(path: directory + "/ledger", options: .init(readOnly: true)).digest()))
        }
    }

    @Test("a task cancelled before it asks gets CancellationError, and nothing runs")
    func alreadyCancelled() async throws {
        try await withLedger { ledger async throws in
            try Self.fill(ledger, events: 10)
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await ledger.digest()
            }
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
    }

    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var parts: [String] = []
        var text: String { lock.withLock { parts.joined() } }
        func add(_ part: String) { lock.withLock { parts.append(part) } }
    }
}
