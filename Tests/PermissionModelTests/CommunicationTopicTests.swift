import Foundation
import PermissionModel
import Testing

@Suite struct CommunicationTopicTests {
    @Test func needsAtLeastOnePerson() {
        let error = #expect(throws: PermissionModelError.self) {
            try CommunicationTopic(personInformation: [], actions: [.message])
        }
        #expect(error?.field == "people")
        #expect(throws: PermissionModelError.self) { try CommunicationTopic(handles: []) }
    }

    @Test func rejectsTwoPeopleWithTheSameHandle() throws {
        let alex = try CommunicationHandle(value: "dragonslayer42", kind: .custom)
        let sam = try CommunicationHandle(value: "quietfox", kind: .custom)
        let error = #expect(throws: PermissionModelError.self) {
            try CommunicationTopic(handles: [alex, sam, alex])
        }
        #expect(error?.field == "people[2].handle")
        // Named by position: the handle's value is personal (docs/spec/PRIVACY.md).
        #expect(error?.reason == "the same handle as people[0]")
        #expect(error?.description.contains("dragonslayer42") == false)
    }

    @Test func rejectsTwoSpellingsOfTheSamePhoneNumber() throws {
        var first = PersonNameComponents()
        first.givenName = "Sam"
        var second = PersonNameComponents()
        second.givenName = "Samantha"
        let people = [
            PersonInformation(handle: try CommunicationHandle(value: "+1 (555) 010-9999", kind: .phoneNumber), nameComponents: first),
            PersonInformation(handle: try CommunicationHandle(value: "+1.555.010.9999", kind: .phoneNumber), nameComponents: second),
        ]
        let error = #expect(throws: PermissionModelError.self) { try CommunicationTopic(personInformation: people) }
        #expect(error?.field == "people[1].handle")
    }

    @Test func sameValueOfDifferentKindsIsTwoPeople() throws {
        let topic = try CommunicationTopic(handles: [
            try CommunicationHandle(value: "5550100", kind: .custom),
            try CommunicationHandle(value: "5550100", kind: .phoneNumber),
        ])
        #expect(topic.handles.count == 2)
    }

    @Test func keepsPeopleInOrderAndFoldsActions() throws {
        let handles = [
            try CommunicationHandle(value: "zeta", kind: .custom),
            try CommunicationHandle(value: "alpha@example.com", kind: .emailAddress),
            try CommunicationHandle(value: "alpha", kind: .custom),
        ]
        let topic = try CommunicationTopic(handles: handles, actions: [.chat, .message, .videoCall, .audioCall])
        #expect(topic.handles == handles, "people order, not sorted")
        #expect(topic.orderedActions == [.message, .audioCall, .videoCall, .chat])
        #expect(try CommunicationTopic(handles: handles).orderedActions.isEmpty, "actions may be empty")
    }

    @Test func actionsAreWrittenInTheSpecOrder() {
        #expect(CommunicationTopic.Action.allCases.map(\.rawValue) == [
            "message", "audioCall", "videoCall", "call", "chat", "follow", "beFollowed", "friend", "connect", "communicate",
        ])
    }

    @Test(arguments: [0, 4097])
    func updateDescriptionMustBe1To4096Bytes(length: Int) {
        let error = #expect(throws: PermissionModelError.self) {
            try SignificantAppUpdateTopic(description: String(repeating: "x", count: length))
        }
        #expect(error?.field == "description")
    }

    @Test func updateDescriptionLimitCountsBytes() throws {
        #expect(try SignificantAppUpdateTopic(description: String(repeating: "x", count: 4096)).description.utf8.count == 4096)
        #expect(try SignificantAppUpdateTopic(description: "x").description == "x")
        // 2049 characters of 2 bytes each: 4098 bytes.
        #expect(throws: PermissionModelError.self) { try SignificantAppUpdateTopic(description: String(repeating: "é", count: 2049)) }
    }
}
