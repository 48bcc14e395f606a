import Foundation
import PermissionModel
import Testing

@Suite struct PermissionChoiceTests {
    @Test func grantSecondsIsAllowedOnApprovals() throws {
        let choice = try PermissionChoice(id: "approve-1h", title: "Approve for one hour", answer: .approval, grantSeconds: 3600)
        #expect(choice.grantSeconds == 3600)
        #expect(choice.answer == .approval)
        #expect(try PermissionChoice(id: "approve", title: "Approve", answer: .approval).grantSeconds == nil)
        #expect(try PermissionChoice(id: "x", title: "X", answer: .approval, grantSeconds: 1).grantSeconds == 1)
    }

    @Test func grantSecondsIsRejectedOnDenials() {
        let error = #expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "decline-1h", title: "Decline for one hour", answer: .denial, grantSeconds: 3600)
        }
        #expect(error?.field == "grantSeconds")
    }

    @Test func denialWithoutGrantSecondsIsFine() throws {
        #expect(try PermissionChoice(id: "decline", title: "Decline", answer: .denial).grantSeconds == nil)
    }

    @Test(arguments: [Int64(0), -1, -3600, .min])
    func grantSecondsMustBePositive(seconds: Int64) {
        let error = #expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "approve", title: "Approve", answer: .approval, grantSeconds: seconds)
        }
        #expect(error?.field == "grantSeconds")
    }

    @Test func idAndTitleMustNotBeEmpty() {
        #expect((#expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "", title: "Approve", answer: .approval)
        })?.field == "id")
        #expect((#expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "approve", title: "", answer: .approval)
        })?.field == "title")
    }

    @Test func permissionKitDefaults() {
        #expect(PermissionChoice.approve.id == "approve")
        #expect(PermissionChoice.approve.title == "Approve")
        #expect(PermissionChoice.approve.answer == .approval)
        #expect(PermissionChoice.decline.id == "decline")
        #expect(PermissionChoice.decline.title == "Decline")
        #expect(PermissionChoice.decline.answer == .denial)
    }
}

@Suite struct PermissionQuestionTests {
    static let id = UUID(uuidString: "6A3F1C2E-0000-4000-8000-000000000001")!

    static func topic() throws -> QuestionTopic {
        .communication(try CommunicationTopic(handles: [try CommunicationHandle(value: "dragonslayer42", kind: .custom)], actions: [.message]))
    }

    static func choice(_ id: String, _ answer: PermissionChoice.Answer) throws -> PermissionChoice {
        try PermissionChoice(id: id, title: id.capitalized, answer: answer)
    }

    @Test func defaultsToApproveAndDeclineWithDeclineAsDefault() throws {
        let q = try PermissionQuestion(id: Self.id, topic: try Self.topic())
        #expect(q.choices.map(\.id) == ["approve", "decline"])
        #expect(q.defaultChoiceID == "decline")
        #expect(q.defaultChoice == .decline)
        #expect(q.expiresAt == nil)
    }

    @Test func defaultChoiceDefaultsToTheFirstDenial() throws {
        let choices = [
            try Self.choice("allow", .approval),
            try Self.choice("dont-allow", .denial),
            try Self.choice("never", .denial),
        ]
        let q = try PermissionQuestion(id: Self.id, topic: try Self.topic(), choices: choices)
        #expect(q.defaultChoiceID == "dont-allow")
        #expect(q.defaultChoice.answer == .denial)
        #expect(q.choice(id: "never")?.answer == .denial)
        #expect(q.choice(id: "maybe") == nil)
    }

    @Test func explicitDefaultChoiceMayBeAnApproval() throws {
        let q = try PermissionQuestion(
            id: Self.id, topic: try Self.topic(),
            choices: [try Self.choice("decline", .denial), try Self.choice("approve", .approval)], defaultChoiceID: "approve")
        #expect(q.defaultChoice.id == "approve")
        #expect(q.defaultChoice.answer == .approval)
    }

    @Test func defaultChoiceMustBeAmongTheChoices() throws {
        let topic = try Self.topic()
        let error = #expect(throws: PermissionModelError.self) {
            try PermissionQuestion(id: Self.id, topic: topic, defaultChoiceID: "deny")
        }
        #expect(error?.field == "defaultChoice")
        #expect(error?.reason.contains("deny") == true)
    }

    @Test func choiceIDsMustBeUnique() throws {
        let choices = [
            try Self.choice("approve", .approval),
            try PermissionChoice(id: "approve", title: "Approve for one hour", answer: .approval, grantSeconds: 3600),
            try Self.choice("decline", .denial),
        ]
        let topic = try Self.topic()
        let error = #expect(throws: PermissionModelError.self) {
            try PermissionQuestion(id: Self.id, topic: topic, choices: choices)
        }
        #expect(error?.field == "choices[1].id")
    }

    @Test func needsAnApproval() throws {
        let choices = [try Self.choice("not-now", .denial), try Self.choice("block", .denial)]
        let topic = try Self.topic()
        let error = #expect(throws: PermissionModelError.self) { try PermissionQuestion(id: Self.id, topic: topic, choices: choices) }
        #expect(error?.field == "choices")
        #expect(error?.reason.contains("approval") == true)
    }

    @Test func needsADenial() throws {
        let choices = [
            try PermissionChoice(id: "approve-1h", title: "Approve for one hour", answer: .approval, grantSeconds: 3600),
            try Self.choice("approve", .approval),
        ]
        let topic = try Self.topic()
        let error = #expect(throws: PermissionModelError.self) { try PermissionQuestion(id: Self.id, topic: topic, choices: choices) }
        #expect(error?.field == "choices")
        #expect(error?.reason.contains("denial") == true)
    }

    @Test func noChoicesAtAllIsRejected() throws {
        let topic = try Self.topic()
        #expect(throws: PermissionModelError.self) { try PermissionQuestion(id: Self.id, topic: topic, choices: []) }
    }

    @Test func keepsExpiryAndTopic() throws {
        let expiresAt = try Timestamp(rfc3339: "2026-11-21T09:00:00Z")
        let update = QuestionTopic.significantAppUpdate(try SignificantAppUpdateTopic(description: "Version 5"))
        let q = try PermissionQuestion(id: Self.id, topic: update, expiresAt: expiresAt)
        #expect(q.expiresAt == expiresAt)
        #expect(q.expirationDate == expiresAt.date)
        #expect(q.topic.name == "significantAppUpdate")
        #expect(q.topic.handles.isEmpty)
        #expect(try Self.topic().name == "communication")
        #expect(try Self.topic().handles.map(\.value) == ["dragonslayer42"])
    }
}
