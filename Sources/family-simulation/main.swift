// A small simulated family on a PermissionLedger: three children ask a guardian, in concurrent tasks,
// for permission to talk to their friends. Some asks fail, some are canceled, the guardian approves,
// declines or ignores the rest, and a sweep expires what was ignored. Subscribers print what they see.
//
//   swift run family-simulation [--ledger PATH] [--expires-in SECONDS]
//
// Without --ledger the ledger lives in a temporary directory that is removed at the end. The questions
// expire --expires-in seconds after the start (1.5 by default): every ask and answer must be recorded
// before then. The order of the live lines varies from run to run (the tasks are concurrent); the summary
// at the end does not.
import Foundation
import PermissionLedger
import PermissionModel

func usage() -> Never {
    print("usage: family-simulation [--ledger PATH] [--expires-in SECONDS]")
    exit(2)
}

var ledgerPath: String?
var expiresIn = 1.5
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--ledger": ledgerPath = arguments.next()
    case "--expires-in":
        guard let seconds = arguments.next().flatMap(Double.init), seconds > 0, seconds <= 3600 else { usage() }
        expiresIn = seconds
    default:
        usage()
    }
}
let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("family-simulation-\(getpid())").path
let path = ledgerPath ?? temporary
defer { if ledgerPath == nil { try? FileManager.default.removeItem(atPath: temporary) } }

let ledger = try Ledger(path: path)
let children = ["kid-ava", "kid-ben", "kid-cy"]
let friendsPerChild = 4
let startSeq = try ledger.head().seq

/// What becomes of one question, decided up front so that the outcome does not depend on timing.
enum Plan: CaseIterable {
    case askFails, childCancels, guardianApproves, guardianDeclines, guardianIgnores
}

/// The plan for friend `index` of child `child`: every kind of outcome occurs.
func plan(child: Int, friend index: Int) -> Plan {
    Plan.allCases[(child * friendsPerChild + index) % Plan.allCases.count]
}

func friend(child: Int, _ index: Int) throws -> CommunicationHandle {
    switch index % 3 {
    case 0: try CommunicationHandle(value: "+1 415 555 \(String(format: "%04d", child * 100 + index))", kind: .phoneNumber)
    case 1: try CommunicationHandle(value: "friend\(child)\(index)@example.com", kind: .emailAddress)
    default: try CommunicationHandle(value: "player-\(child)-\(index)", kind: .custom)
    }
}

/// Questions the children sent, for the guardian to answer.
let (inbox, inboxWriter) = AsyncStream.makeStream(of: (subject: String, question: PermissionQuestion, plan: Plan).self)
let expiry = Timestamp(Date().addingTimeInterval(expiresIn))

print("ledger: \(path)")
print("\(children.count) children ask about \(friendsPerChild) friends each, in concurrent tasks\n")

/// How many questions the guardian answers.
let answered = (0..<children.count).flatMap { c in (0..<friendsPerChild).map { plan(child: c, friend: $0) } }
    .filter { $0 == .guardianApproves || $0 == .guardianDeclines }.count

// Subscribers: every response as it is recorded, and one child's known handles as they change.
let responsesSeen = Task {
    var count = 0
    for try await response in ledger.responses(after: startSeq) {
        let handles = response.question.topic.handles.map(\.value).joined(separator: ", ")
        print("  response   \(response.subject): \(response.choice.id) \(handles) (via \(response.via.rawValue), seq \(response.seq))")
        count += 1
        if count == answered { break }
    }
    return count
}
let avaWatcher = Task {
    for try await update in ledger.subject("kid-ava").knownHandleUpdates() {
        let handles = update.handles.map(\.handle.value)
        print("  known      kid-ava may talk to: \(handles.isEmpty ? "nobody yet" : handles.joined(separator: ", "))  (as of seq \(update.seq))")
    }
}

// The children ask, in parallel.
try await withThrowingTaskGroup(of: Void.self) { group in
    for (c, subject) in children.enumerated() {
        group.addTask {
            let child = ledger.subject(subject)
            for index in 0..<friendsPerChild {
                let plan = plan(child: c, friend: index)
                let question = try PermissionQuestion(handle: try friend(child: c, index), expiresAt: expiry)
                try await child.recordAsk(question)
                switch plan {
                case .askFails:
                    try await child.recordAskFailed(question.id, error: AskError(code: .communicationLimitsNotEnabled))
                    print("  ask failed \(subject): \(question.topic.handles[0].value) (communication limits not enabled)")
                case .childCancels:
                    try await child.recordSendCanceled(question.id)
                    print("  canceled   \(subject): \(question.topic.handles[0].value)")
                default:
                    print("  sent       \(subject): \(question.topic.handles[0].value)")
                    inboxWriter.yield((subject, question, plan))
                }
            }
        }
    }
    try await group.waitForAll()
    inboxWriter.finish()
}

// The guardian answers what arrived.
for await (subject, question, plan) in inbox {
    let child = ledger.subject(subject)
    switch plan {
    case .guardianApproves: try await child.recordResponse(to: question.id, choice: .approve, via: .messages)
    case .guardianDeclines: try await child.recordResponse(to: question.id, choice: .decline, via: .inPerson)
    default: break  // ignored: it will expire
    }
}
_ = try await responsesSeen.value

// A timer would run the sweep; here it runs once the questions' expiresAt has passed.
while Timestamp(Date()) < expiry { try await Task.sleep(for: .milliseconds(100)) }
let expired = try await ledger.expireOverdueQuestions()
print("  sweep      expired \(expired.count) ignored question\(expired.count == 1 ? "" : "s")")
let again = try await ledger.expireOverdueQuestions()
print("  sweep      again: expired \(again.count) (sweeps are idempotent)")
try await Task.sleep(for: .milliseconds(100))
avaWatcher.cancel()

print("\nwhat the ledger knows now:")
for subject in children {
    let child = ledger.subject(subject)
    let states = try await child.questions().map(\.state.rawValue)
    let counts = Dictionary(grouping: states, by: { $0 }).map { "\($0.value.count) \($0.key)" }.sorted()
    let known = try await child.knownHandles().map(\.handle.value)
    print("  \(subject): questions \(counts.joined(separator: ", ")); may talk to: \(known.isEmpty ? "nobody yet" : known.joined(separator: ", "))")
}
let report = try ledger.verify()
print("\nverify: \(report.isIntact ? "ok" : "DAMAGED: \(report.problem ?? "")"), \(report.events) events, head \(report.head)")
let statistics = ledger.writerStatistics
print("writer: \(statistics.requests) appends in \(statistics.transactions) transactions (group commit)")
