import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// The README's embedding example, as written there, so that it keeps compiling and doing what it says.
@Suite struct ReadmeExampleTests {
    @Test("the README's embedding example records an approval, travels back, follows responses and sweeps")
    func embeddingExample() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/family.ledger")   // one per process; share it
            let child = ledger.subject("kid-1")

            let alex = try CommunicationHandle(value: "dragonslayer42", kind: .custom)
            let question = try PermissionQuestion(handle: alex)
            try await child.recordAsk(question)
            try await child.recordResponse(to: question.id, choice: .approve)

            let known = try await child.isKnownHandle(alex)
            let before = try await ledger.question(question.id, asOf: .seq(1))?.state
            #expect(known)
            #expect(before == .pending)

            let seen = Task { () -> (String, UInt64)? in
                for try await response in child.responses() { return (response.choice.id, response.seq) }
                return nil
            }
            let first = try await seen.value
            #expect(first?.0 == "approve" && first?.1 == 2)

            #expect(try await ledger.expireOverdueQuestions() == [])
        }
    }
}
