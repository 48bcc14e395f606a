import CoreMetrics
import Foundation
import Logging
@testable import PermissionLedger
import PermissionModel
import Testing

/// The ledger's logging (swift-log) and metrics (swift-metrics), through the options.
@Suite struct TelemetryTests {
    /// Keeps every value each metric was given, by label.
    final class RecordingMetrics: MetricsFactory, @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String: [Int64]] = [:]

        func values(_ label: String) -> [Int64] { lock.withLock { values[label] ?? [] } }
        fileprivate func record(_ label: String, _ value: Int64) { lock.withLock { values[label, default: []].append(value) } }

        final class Handler: CounterHandler, RecorderHandler, TimerHandler, @unchecked Sendable {
            let label: String
            let metrics: RecordingMetrics
            init(_ label: String, _ metrics: RecordingMetrics) { (self.label, self.metrics) = (label, metrics) }
            func increment(by amount: Int64) { metrics.record(label, amount) }
            func reset() {}
            func record(_ value: Int64) { metrics.record(label, value) }
            func record(_ value: Double) { metrics.record(label, Int64(value)) }
            func recordNanoseconds(_ duration: Int64) { metrics.record(label, duration) }
        }

        func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { Handler(label, self) }
        func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { Handler(label, self) }
        func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { Handler(label, self) }
        func destroyCounter(_ handler: any CounterHandler) {}
        func destroyRecorder(_ handler: any RecorderHandler) {}
        func destroyTimer(_ handler: any TimerHandler) {}
    }

    /// Keeps every log line with its metadata.
    final class RecordingLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        var lines: [String] { lock.withLock { entries } }
        func add(_ line: String) { lock.withLock { entries.append(line) } }

        struct Handler: LogHandler {
            let log: RecordingLog
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .trace
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                let all = metadata.merging(event.metadata ?? [:]) { $1 }
                log.add("\(event.level) \(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
            }
        }

        var logger: Logger { Logger(label: "test") { _ in Handler(log: self) } }
    }

    @Test("appends, commits, sizes and subscription lag are measured with the factory of the options")
    func metrics() async throws {
        try await withTemporaryDirectory { directory async throws in
            let metrics = RecordingMetrics()
            let ledger = try await Ledger.open(
                path: directory + "/ledger", options: .init(mapSize: 1 << 20, durable: false, metricsFactory: metrics))
            let child = ledger.subject("kid-1")
            for n in 0..<10 {
                try await child.recordPermission(.camera, state: n % 2 == 0 ? .authorized : .denied, cause: .settings)
            }
            await #expect(throws: AppendRejected.self) { try await child.recordResponse(to: UUID(), choiceID: "approve") }
            var events = ledger.events().makeAsyncIterator()
            _ = try await events.next()
            await ledger.close()

            #expect(metrics.values(LedgerMetricNames.appendDuration).count == 11)
            #expect(metrics.values(LedgerMetricNames.appendDuration).allSatisfy { $0 > 0 })
            #expect(metrics.values(LedgerMetricNames.commits).reduce(0, +) == 10)
            #expect(metrics.values(LedgerMetricNames.rejectedAppends).reduce(0, +) == 1)
            #expect(metrics.values(LedgerMetricNames.commitGroupSize).reduce(0, +) == 11)
            #expect(metrics.values(LedgerMetricNames.commitEvents).reduce(0, +) == 11)
            #expect(metrics.values(LedgerMetricNames.headSeq).last == 10)
            #expect(metrics.values(LedgerMetricNames.mapBytes).last == 1 << 20)
            #expect((metrics.values(LedgerMetricNames.usedBytes).last ?? 0) > 0)
            // The subscription read its first page from the start of a log of 10 events.
            #expect(metrics.values(LedgerMetricNames.subscriptionLag).first == 10)
        }
    }

    @Test("the log says what the ledger did, and never holds a subject, a handle or a name")
    func logsHoldNothingPersonal() async throws {
        try await withTemporaryDirectory { directory async throws in
            let log = RecordingLog()
            let path = directory + "/ledger"
            let ledger = try await Ledger.open(path: path, options: .init(durable: false, logger: log.logger))
            let child = ledger.subject("kid-secret-subject")
            var name = PersonNameComponents()
            name.givenName = "Secret Name"
            let question = try PermissionQuestion(communicationTopic: CommunicationTopic(
                personInformation: [PersonInformation(handle: .phoneNumber("+14155550199"), nameComponents: name)]))
            try await child.recordAsk(question)
            try await child.recordResponse(to: question.id, choiceID: "approve")
            try await child.recordKnownHandles([.emailAddress("secret.friend@example.net")], among: [.emailAddress("secret.friend@example.net")])
            await #expect(throws: AppendRejected.self) { try await child.recordResponse(to: question.id, choiceID: "decline") }
            _ = try await ledger.verify()
            await ledger.close()
            // Appending to a closed ledger fails, and is logged by no one but the caller.
            await #expect(throws: LedgerError.self) { try await child.recordExpiry(question.id) }

            let lines = log.lines
            #expect(lines.contains { $0.hasPrefix("info opened the ledger") && $0.contains("path=\(path)") })
            #expect(lines.contains { $0.hasPrefix("info closed the ledger") && $0.contains("appendCalls=4") })
            for secret in ["kid-secret-subject", "14155550199", "Secret Name", "secret.friend", question.id.uuidString] {
                #expect(!lines.contains { $0.contains(secret) }, "a log line holds \(secret)")
            }
        }
    }

    @Test("a ledger whose derived tables are rebuilt when opened says so in its log")
    func rebuildIsLogged() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try await Ledger.open(path: path, options: .init(durable: false))
                try await ledger.importFixture("time-limited.jsonl")
                await ledger.close()
            }
            try OlderProjectionsTests.makeVersion4(path)
            let log = RecordingLog()
            let steps = OffPoolWorkTests.Progress()
            let ledger = try await Ledger.open(path: path, options: .init(durable: false, logger: log.logger)) { steps.report($0.completed) }
            let head = try ledger.head()
            #expect(steps.reports == 1 && steps.seq == head.seq, "a log of fewer than 1,024 events: one report, at the end")
            #expect(log.lines.contains { $0.hasPrefix("notice rebuilding the derived tables of an older version") })
            #expect(log.lines.contains { $0.hasPrefix("info opened the ledger") && $0.contains("rebuilt=true") })
            await ledger.close()
        }
    }
}
