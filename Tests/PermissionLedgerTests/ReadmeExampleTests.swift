import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// The README's embedding example, as written there, so that it keeps compiling and doing what it says.
@Suite struct ReadmeExampleTests {
    @Test("the README's embedding example records an approval and travels back to before it")
    func embeddingExample() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/family.ledger")

            let alex = try CommunicationHandle(value: "dragonslayer42", kind: .custom)
            let question = try PermissionQuestion(
                id: UUID(),
                topic: .communication(try CommunicationTopic(handles: [alex], actions: [.message])))
            let now = Timestamp(Date())

            try await ledger.append([
                PermissionEvent(id: "ask-1", subject: "kid-1", occurredAt: now, payload: .questionAsked(question)),
                PermissionEvent(id: "answer-1", subject: "kid-1", occurredAt: now,
                                payload: .questionAnswered(questionID: question.id, choiceID: "approve", via: .messages)),
            ])

            let known = try ledger.read { try $0.isKnownHandle(alex, subject: "kid-1") }
            let before = try ledger.read(asOf: .seq(1)) { try $0.question(question.id)?.state }
            #expect(known)
            #expect(before == .pending)
            #expect(try ledger.read { try $0.question(question.id)?.state } == .approved)
        }
    }
}
