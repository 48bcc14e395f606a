// Measures batched durable append throughput and in-memory replay throughput of the ledger; with
// `latency`, the latency of as-of queries on a small and a large ledger; with `group-commit`, concurrent
// durable single appends with and without group commit.
//
//   swift run -c release ledger-benchmark [--events N] [--batch N] [--dir PATH] [--keep] [--no-sync]
//   swift run -c release ledger-benchmark latency [--small N] [--large N] [--samples N] [--dir DIR]
//   swift run -c release ledger-benchmark group-commit [--tasks N] [--appends N] [--json FILE]
//
// Not a test: figures depend on the machine. Targets on the 2-core reference machine:
// append >= 200,000 events/s in batches of 10,000 with a durable commit each (--no-sync: without, to see what the disk costs); replay >= 1,000,000 events/s.
import Foundation
import PermissionLedger
import PermissionModel

if CommandLine.arguments.dropFirst().first == "latency" {
    try runLatencyBenchmark(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "group-commit" {
    try await runGroupCommitBenchmark(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
}

var eventCount = 1_000_000
var batchSize = 10_000
var directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-benchmark-\(getpid())").path
var keepLedger = false
var durable = true
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--events": eventCount = Int(arguments.next() ?? "") ?? eventCount
    case "--batch": batchSize = Int(arguments.next() ?? "") ?? batchSize
    case "--dir": directory = arguments.next() ?? directory
    case "--keep": keepLedger = true
    case "--no-sync": durable = false
    default:
        print("usage: ledger-benchmark [--events N] [--batch N] [--dir PATH] [--keep] [--no-sync]")
        exit(2)
    }
}

/// A seeded generator (SplitMix64), so that runs repeat.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A realistic mix: questions about one to three handles answered, canceled, failed or expired;
/// observations of known handles; permission changes. All valid by construction; produced in batches
/// so that ten million events never sit in memory at once.
struct EventGenerator {
    var rng: SeededRandom
    var clock = Timestamp(microseconds: 1_795_000_000_000_000)
    var pending: [(UUID, String)] = []
    var n = 0
    /// A sample of asked questions and the seq they were asked at, for queries.
    var askedSample: [(id: UUID, seq: UInt64)] = []
    var emitted: UInt64 = 0
    let subjects: Int
    let choices = [try! PermissionChoice(id: "approve-1h", title: "Approve for one hour", answer: .approval, grantSeconds: 3600),
                   PermissionChoice.approve, PermissionChoice.decline]

    init(seed: UInt64, subjects: Int = 1000) {
        rng = SeededRandom(state: seed)
        self.subjects = subjects
    }

    private mutating func tick() -> Timestamp {
        clock = Timestamp(microseconds: clock.microseconds + Int64.random(in: 1_000...500_000, using: &rng))
        return clock
    }

    private func handle(_ i: Int) -> CommunicationHandle {
        switch i % 3 {
        case 0: try! CommunicationHandle(value: "+1555\(String(format: "%07d", i % 10_000_000))", kind: .phoneNumber)
        case 1: try! CommunicationHandle(value: "friend\(i)@example.com", kind: .emailAddress)
        default: try! CommunicationHandle(value: "player\(i)", kind: .custom)
        }
    }

    mutating func next(_ count: Int) -> [PermissionEvent] {
        var events: [PermissionEvent] = []
        events.reserveCapacity(count)
        while events.count < count {
            n += 1
            let kid = Int.random(in: 0..<subjects, using: &rng)
            let subject = "kid-\(kid)"
            // Each child has a pool of 40 contacts, as children do: a handle's history grows with the log.
            let contact = Int.random(in: 0..<38, using: &rng)
            let roll = Int.random(in: 0..<100, using: &rng)
            let at = tick()
            if roll < 40 || pending.isEmpty {
                let people = (0..<Int.random(in: 1...3, using: &rng)).map { PersonInformation(handle: handle(kid * 40 + contact + $0)) }
                let (a, b) = (rng.next(), rng.next())
                let id = withUnsafeBytes(of: (a, b)) { raw in
                    UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6] & 0x0F | 0x40, raw[7],
                                raw[8] & 0x3F | 0x80, raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
                }
                let q = try! PermissionQuestion(
                    id: id, topic: .communication(try! CommunicationTopic(personInformation: people, actions: [.message, .audioCall])),
                    choices: choices, expiresAt: at.adding(seconds: 86_400))
                events.append(PermissionEvent(id: "ev-\(n)", subject: subject, occurredAt: at, recordedAt: at, payload: .questionAsked(q)))
                pending.append((q.id, subject))
                let seq = emitted + UInt64(events.count)
                if askedSample.count < 1000 {
                    askedSample.append((q.id, seq))
                } else if Int.random(in: 0..<n, using: &rng) < 1000 {
                    askedSample[Int.random(in: 0..<1000, using: &rng)] = (q.id, seq)
                }
            } else if roll < 80 {
                let (id, owner) = pending.removeFirst()
                let payload: PermissionEvent.Payload
                switch Int.random(in: 0..<20, using: &rng) {
                case 0: payload = .questionSendCanceled(questionID: id)
                case 1: payload = .questionAskFailed(questionID: id, error: AskError(code: .notAvailable))
                case 2: payload = .questionExpired(questionID: id)
                case 3...10: payload = .questionAnswered(questionID: id, choiceID: "approve", via: .messages)
                case 11...14: payload = .questionAnswered(questionID: id, choiceID: "approve-1h", via: .inPerson)
                default: payload = .questionAnswered(questionID: id, choiceID: "decline", via: .messages)
                }
                events.append(PermissionEvent(id: "ev-\(n)", subject: owner, occurredAt: at, recordedAt: at, payload: payload))
            } else if roll < 90 {
                let checked = (0..<2).map { handle(kid * 40 + contact + $0) }
                events.append(PermissionEvent(id: "ev-\(n)", subject: subject, occurredAt: at, recordedAt: at,
                                              payload: .handlesObserved(checked: checked, known: [checked[0]])))
            } else {
                let permission = SystemPermission.allCases[Int.random(in: 0..<SystemPermission.allCases.count, using: &rng)]
                let state = SystemPermission.State.allCases[Int.random(in: 0..<SystemPermission.State.allCases.count, using: &rng)]
                events.append(PermissionEvent(id: "ev-\(n)", subject: subject, occurredAt: at, recordedAt: at,
                                              payload: .permissionChanged(permission, state: state, cause: .systemPrompt)))
            }
        }
        emitted += UInt64(events.count)
        return events
    }
}

func generateEvents(_ count: Int) -> [PermissionEvent] {
    var generator = EventGenerator(seed: 20261122)
    return generator.next(count)
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let reuse = keepLedger && FileManager.default.fileExists(atPath: directory + "/data.mdb")
if !reuse { try? FileManager.default.removeItem(atPath: directory) }
defer { if !keepLedger { try? FileManager.default.removeItem(atPath: directory) } }

print(reuse ? "reusing the ledger in \(directory)" : "generating \(eventCount) events …")
let events = reuse ? [] : generateEvents(eventCount)
let ledger = try Ledger(path: directory, options: .init(mapSize: 1 << 30, durable: durable))
var appended = 0
let appendSeconds = try seconds {
    var start = 0
    while start < events.count {
        let end = min(start + batchSize, events.count)
        appended += try ledger.appendSynchronously(Array(events[start..<end])).appended
        start = end
    }
}
let appendRate = Double(appended) / appendSeconds
if !reuse { print(String(format: "append: %d events in batches of %d, %@: %.2f s, %.0f events/s (target 200,000)",
             appended, batchSize, durable ? "durable commits" : "NO sync", appendSeconds, appendRate)) }

var summary: ReplaySummary?
let replaySeconds = try seconds { summary = try ledger.replayInMemory() }
let replayRate = Double(summary!.events) / replaySeconds
print(String(format: "replay into memory: %d events, %d questions: %.2f s, %.0f events/s (target 1,000,000)",
             summary!.events, summary!.questions, replaySeconds, replayRate))
let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int) ?? 0
print(String(format: "data file: %.1f MiB, %.0f bytes/event", Double(size) / 1_048_576, Double(size) / Double(summary!.events)))
let ledgerHead = try ledger.head().hash
precondition(summary!.head == ledgerHead, "replay gave a different head hash than the ledger")
