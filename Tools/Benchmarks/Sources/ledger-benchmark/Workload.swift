import Foundation
import PermissionLedger
import PermissionModel
import PermissionLedgerTesting

/// A realistic, seeded mix over many subjects (1,000 children by default, each with a pool of 40 contacts):
/// 40% questions about one to three handles; 40% their ends (answers through messages, in person and by
/// default, with approvals for good or for an hour and declines; cancels; send failures with every
/// `AskError` code; expiries); 10% observations of known handles; 10% permission changes. All valid by construction; produced in batches
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
        rng = SeededRandom(seed: seed)
        self.subjects = subjects
    }

    private mutating func tick() -> Timestamp {
        clock = Timestamp(microseconds: clock.microseconds + Int64.random(in: 1_000...500_000, using: &rng))
        return clock
    }

    func handle(_ i: Int) -> CommunicationHandle {
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
                // Every way a question ends: answers by every path, cancels, send failures, expiries.
                switch Int.random(in: 0..<20, using: &rng) {
                case 0: payload = .questionSendCanceled(questionID: id)
                case 1:
                    let code = AskError.Code.allCases[Int.random(in: 0..<AskError.Code.allCases.count, using: &rng)]
                    payload = .questionAskFailed(questionID: id, error: AskError(code: code))
                case 2: payload = .questionExpired(questionID: id)
                case 3...8: payload = .questionAnswered(questionID: id, choiceID: "approve", via: .messages)
                case 9: payload = .questionAnswered(questionID: id, choiceID: "approve", via: .default)
                case 10...13: payload = .questionAnswered(questionID: id, choiceID: "approve-1h", via: .inPerson)
                case 14...18: payload = .questionAnswered(questionID: id, choiceID: "decline", via: .messages)
                default: payload = .questionAnswered(questionID: id, choiceID: "decline", via: .inPerson)
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

extension EventGenerator {
    /// Generates `count` events in batches of at most `batch` (so that millions never sit in memory at once),
    /// hands each batch to `body`, and logs progress every million events after `progress`.
    mutating func generate(_ count: Int, batch: Int = 50_000, progress: String? = nil, _ body: ([PermissionEvent]) throws -> Void) rethrows {
        var remaining = count
        while remaining > 0 {
            let events = next(min(batch, remaining))
            remaining -= events.count
            try body(events)
            if let progress, (count - remaining) % 1_000_000 == 0 { log("    \(count - remaining) events \(progress)") }
        }
    }
}

/// `ledger-benchmark workload`: writes `--events` events of the workload (seed `--seed`, `--subjects` children)
/// as JSON Lines to standard output, the stream the suite feeds `permission-ledger import`.
func writeWorkload(_ arguments: [String]) throws {
    var count = 1_000_000
    var seed: UInt64 = 7_000 + 10_000_000
    var subjects = 1000
    var arguments = arguments.makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--events": count = Int(arguments.next() ?? "") ?? count
        case "--seed": seed = UInt64(arguments.next() ?? "") ?? seed
        case "--subjects": subjects = Int(arguments.next() ?? "") ?? subjects
        default:
            print("usage: ledger-benchmark workload [--events N] [--seed N] [--subjects N]   (the suite's import uses seed 7000 + N)")
            exit(argument == "--help" ? 0 : 2)
        }
    }
    var generator = EventGenerator(seed: seed, subjects: subjects)
    generator.generate(count) { FileHandle.standardOutput.write(Data(jsonLines($0).utf8)) }
}

/// Events as JSON Lines, each line ending in `\n`: what `permission-ledger import` reads.
func jsonLines(_ events: [PermissionEvent]) -> String {
    var text = ""
    text.reserveCapacity(events.count * 400)
    for event in events {
        text += EventJSON.encode(event)
        text += "\n"
    }
    return text
}
