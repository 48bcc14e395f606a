import Foundation
import PermissionModel
import Testing

/// docs/spec/CLI.md "Common": error messages name where and why without repeating a personal value; a
/// handle's value is personal (docs/spec/PRIVACY.md).
@Suite struct ErrorPrivacyTests {
    /// Invalid handles, each with text of its value that no message may show.
    static let invalidHandles: [(String, CommunicationHandle.Kind, String)] = [
        ("+1 555 CALL ZELDA", .phoneNumber, "ZELDA"),
        ("55512345678901234567890", .phoneNumber, "55512345678901234567890"),
        ("(87)", .phoneNumber, "87"),
        ("555\u{200B}0199", .phoneNumber, "0199"),
        ("zelda.moss@home@example.com", .emailAddress, "zelda"),
        ("zelda.moss.example.com", .emailAddress, "zelda"),
        ("zelda moss@example.com", .emailAddress, "zelda"),
        ("@zelda-moss.example.com", .emailAddress, "zelda"),
        ("zelda.moss@", .emailAddress, "zelda"),
        ("zelda\u{200B}@example.com", .emailAddress, "zelda"),
        ("zelda\u{0001}@example.com", .emailAddress, "zelda"),
        ("zelda\nmoss", .custom, "zelda"),
        ("zelda\u{202E}moss", .custom, "zelda"),
        (String(repeating: "zelda", count: 60), .custom, "zelda"),
    ]

    @Test("a rejected handle's message names the field and why, never the value", arguments: invalidHandles)
    func invalidHandleMessages(value: String, kind: CommunicationHandle.Kind, secret: String) {
        let error = #expect(throws: PermissionModelError.self) { try CommunicationHandle(value: value, kind: kind) }
        #expect(error?.field == "value")
        #expect(error?.description.contains(secret) == false, "\(String(describing: error))")
    }

    @Test("two people with the same handle are named by position, not by the handle's value")
    func sameHandleNamesPositions() throws {
        let handles = try ["zelda@example.com", "orbit@example.com", " Zelda@Example.COM "].map {
            try CommunicationHandle(value: $0, kind: .emailAddress)
        }
        let error = #expect(throws: PermissionModelError.self) { try CommunicationTopic(handles: handles) }
        #expect(error?.description == "people[2].handle: the same handle as people[0]")
    }

    @Test("a rejected title or description names the field and the code point, never the text")
    func freeTextMessages() {
        let title = #expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "approve", title: "Let Zelda call\u{0007}", answer: .approval)
        }
        #expect(title?.description == "title: holds U+0007 (a control character); text may not hold control characters other than tab and line feed")
        let description = #expect(throws: PermissionModelError.self) {
            try SignificantAppUpdateTopic(description: "Zelda's update\u{001B}[2J")
        }
        #expect(description?.description.contains("Zelda") == false)
    }
}
