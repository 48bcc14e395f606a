import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

// The README's Swift samples, as written there (Tests/EndToEndTests/ReadmeTests.swift checks that they
// still stand here verbatim), compiled and run.

@Test("the README's embedding sample records an approval, travels back, follows responses and sweeps")
func readmeEmbeddingSample() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let (known, before) = try await childAsksAndIsApproved(ledgerPath: directory.appendingPathComponent("family.ledger").path)
    #expect(known)
    #expect(before == .pending)
}

func childAsksAndIsApproved(ledgerPath: String) async throws -> (known: Bool, before: QuestionState?) {
    let ledger = try await Ledger.open(path: ledgerPath)   // one per process; share it
    let child = ledger.subject("kid-1")

    // What PermissionKit reported, in its own terms. Each call returns once its event is durable.
    let alex = try CommunicationHandle.custom("dragonslayer42")
    let question = try PermissionQuestion(handle: alex)
    try await child.recordAsk(question)                                         // AskCenter.ask
    try await child.recordResponse(to: question.id, choice: .approve)          // a PermissionResponse

    // CommunicationLimits-style queries, as of now or any point of the log.
    let known = try await child.isKnownHandle(alex)                             // true
    let before = try await ledger.question(question.id, asOf: .seq(1))?.state  // .pending

    // Live: catch up from a seq, then follow new events; no gap, no duplicate.
    let follower = Task {
        for try await response in child.responses() { print(response.choice.id, response.seq) }
    }

    // From a timer, in any number of processes: expire what is overdue.
    try await ledger.expireOverdueQuestions()
    follower.cancel()
    await ledger.close()   // finishes what was submitted, ends subscriptions, releases the files
    return (known, before)
}

@Test func aLateApprovalStillGrantsTheContact() throws {
    var s = Scenario(subject: "kid-1", start: try Timestamp(rfc3339: "2026-11-20T09:00:00Z"))
    let q = try s.asked(about: [.custom("dragonslayer42")], expiresIn: .seconds(3600))
    s.advance(by: .seconds(600))
    s.expired(q)                                  // the app stopped waiting
    s.advance(by: .seconds(300))
    s.answered(q, choice: "approve")              // the guardian answered anyway

    try s.replay { ledger in                      // a throwaway ledger, removed afterwards
        ledger.expectQuestion(q, state: .expired, asOf: .seq(2))
        ledger.expectQuestion(q, state: .approved, late: true, via: .messages)
        ledger.expectKnownHandles(subject: "kid-1", [try .custom("dragonslayer42")])
    }
}

@Test func theFamilyDayFixtureEndsAsDocumented() throws {
    let fixture = try Fixture(path: "Fixtures/family-day.jsonl")   // from the working directory: the package root under swift test
    try fixture.replay { ledger in
        ledger.expectPermission(.camera, .authorized, subject: "kid-ava")
        ledger.expectDigest("e9c250ecae8108e2456d127d4c1a95042785068dcbe0260701f57a285d64b49e")
    }
}
