import Foundation
import PermissionModel
import Testing

/// docs/spec/EVENTS.md "Text": identifiers hold no character of Unicode's categories Cc, Cf, Zl and Zp; free
/// text holds any character but C0 controls other than tab and line feed, DEL and C1 controls. Messages name
/// the field and the character's code point.
@Suite struct TextRuleTests {
    static let identifierRule = "identifiers may not hold control, format or separator characters"
    static let textRule = "text may not hold control characters other than tab and line feed"

    /// Characters an identifier may not hold, with how a message names them.
    static let notInIdentifiers: [(Character, String)] = [
        ("\u{200B}", "U+200B (a format character)"),   // zero-width space
        ("\u{200C}", "U+200C (a format character)"),   // zero-width non-joiner
        ("\u{200D}", "U+200D (a format character)"),   // zero-width joiner
        ("\u{2060}", "U+2060 (a format character)"),   // word joiner
        ("\u{FEFF}", "U+FEFF (a format character)"),   // byte order mark
        ("\u{00AD}", "U+00AD (a format character)"),   // soft hyphen
        ("\u{202E}", "U+202E (a format character)"),   // right-to-left override
        ("\u{2066}", "U+2066 (a format character)"),   // left-to-right isolate
        ("\u{061C}", "U+061C (a format character)"),   // Arabic letter mark
        ("\u{E0041}", "U+E0041 (a format character)"), // tag latin capital letter A
        ("\u{2028}", "U+2028 (a line separator)"),
        ("\u{2029}", "U+2029 (a paragraph separator)"),
        ("\u{0000}", "U+0000 (a control character)"),
        ("\u{0009}", "U+0009 (a control character)"),
        ("\u{000A}", "U+000A (a control character)"),
        ("\u{001B}", "U+001B (a control character)"),
        ("\u{007F}", "U+007F (a control character)"),
        ("\u{0085}", "U+0085 (a control character)"),
        ("\u{009B}", "U+009B (a control character)"),
    ]

    /// Every character free text may not hold: C0 controls but tab and line feed, DEL, C1 controls.
    static let notInText: [UInt32] = Array(0x00...0x08) + Array(0x0B...0x1F) + [0x7F] + Array(0x80...0x9F)

    static func name(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: Identifiers

    @Test("a custom handle with a control, format or separator character is rejected, naming the code point", arguments: notInIdentifiers)
    func customHandles(character: Character, named: String) {
        let error = #expect(throws: PermissionModelError.self) {
            try CommunicationHandle(value: "orb\(character)it", kind: .custom)
        }
        #expect(error?.field == "value")
        #expect(error?.reason == "holds \(named); \(Self.identifierRule)")
    }

    @Test("an email address with a control, format or separator character is rejected, naming the code point", arguments: notInIdentifiers)
    func emailAddresses(character: Character, named: String) {
        let error = #expect(throws: PermissionModelError.self) {
            try CommunicationHandle(value: "a\(character)@x.org", kind: .emailAddress)
        }
        #expect(error?.field == "value")
        #expect(error?.reason.hasPrefix("is not an email address: it holds \(named)") == true, "\(String(describing: error))")
    }

    @Test("a phone number with a control, format or separator character is rejected, naming the code point", arguments: notInIdentifiers)
    func phoneNumbers(character: Character, named: String) {
        let error = #expect(throws: PermissionModelError.self) {
            try CommunicationHandle(value: "+1 555\(character)010 0100", kind: .phoneNumber)
        }
        #expect(error?.field == "value")
        #expect(error?.reason.hasPrefix("is not a phone number: it holds \(named)") == true, "\(String(describing: error))")
    }

    @Test("a choice id with a control, format or separator character is rejected, naming the code point", arguments: notInIdentifiers)
    func choiceIDs(character: Character, named: String) {
        let error = #expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "approve\(character)", title: "Approve", answer: .approval)
        }
        #expect(error?.field == "id")
        #expect(error?.reason == "holds \(named); \(Self.identifierRule)")
    }

    @Test("identifiers may hold any other character: letters of any script, emoji, a no-break space, marks, private use",
          arguments: ["émoji 🐉", "名前", "no\u{00A0}break", "e\u{0301}", "❤\u{FE0F}", "\u{E000}", "ℌ𝔞𝔫𝔡𝔩𝔢", "a-b_c.d"])
    func identifiersMayHoldOtherCharacters(value: String) throws {
        #expect(try CommunicationHandle(value: value, kind: .custom).value == value)
        #expect(try PermissionChoice(id: value, title: "Approve", answer: .approval).id == value)
    }

    // MARK: Free text

    @Test("a choice title or an update's description with a C0 control (but tab and line feed), DEL or a C1 control is rejected",
          arguments: notInText)
    func freeTextControls(value: UInt32) throws {
        let character = Character(try #require(Unicode.Scalar(value)))
        let reason = "holds \(Self.name(value)) (a control character); \(Self.textRule)"
        let title = #expect(throws: PermissionModelError.self) {
            try PermissionChoice(id: "approve", title: "Approve\(character)now", answer: .approval)
        }
        #expect(title?.field == "title")
        #expect(title?.reason == reason)
        let description = #expect(throws: PermissionModelError.self) {
            try SignificantAppUpdateTopic(description: "\(character)Version 3")
        }
        #expect(description?.field == "description")
        #expect(description?.reason == reason)
    }

    @Test("free text may hold tab, line feed, format characters (a zero-width joiner in an emoji, bidi controls) and separators",
          arguments: ["Approve\tfor an hour", "Version 3\nadds video calls", "👨‍👩‍👧 family chat", "\u{202B}שלום\u{202C}",
                      "zero\u{200B}width", "line\u{2028}separator", "\u{FEFF}bom", "Ünïcödé ✓"])
    func freeTextMayHoldOtherCharacters(value: String) throws {
        #expect(try PermissionChoice(id: "approve", title: value, answer: .approval).title == value)
        #expect(try SignificantAppUpdateTopic(description: value).description == value)
    }
}
