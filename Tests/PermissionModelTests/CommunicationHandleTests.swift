import PermissionModel
import Testing

@Suite struct CommunicationHandleTests {
    // MARK: Phone numbers

    @Test(arguments: [
        ("+1 (555) 010-9999", "+15550109999"),
        ("+1.555.010.9999", "+15550109999"),
        ("555-010-4477", "5550104477"),
        ("(415) 555 0132", "4155550132"),
        ("+44 20 7946 0958", "+442079460958"),
        (" +1 555 010 0001 ", "+15550100001"),
        ("+15550109999", "+15550109999"),
        ("123", "123"),
        ("1-2-3", "123"),
        ("+12345678901234567890", "+12345678901234567890"),
        ("(+1) 555 0100", "+15550100"),
    ])
    func phoneNumbersAreStrippedOfSeparators(raw: String, normalized: String) throws {
        let handle = try CommunicationHandle(value: raw, kind: .phoneNumber)
        #expect(handle.value == normalized, "\(quoted(raw))")
        #expect(handle.kind == .phoneNumber)
    }

    @Test(arguments: [
        "12",                          // 2 digits
        "(12)",                        // 2 digits after stripping
        "123456789012345678901",       // 21 digits
        "+",                           // no digits
        "",                            // empty
        "+1 555 CALL NOW",             // letters
        "555-010-44x7",                // a letter among digits
        "++15550100",                  // two leading +
        "1+5550100",                   // + not leading
        "+1555+0100",                  // a second + later
        "+1/555/0100",                 // '/' is not a separator
        "+1\t555\t0100",               // a tab is not one of the separators
        "１２３４",                     // full-width digits are not ASCII digits
    ])
    func invalidPhoneNumbersAreRejected(raw: String) {
        let error = #expect(throws: PermissionModelError.self, "\(quoted(raw)) should be rejected") {
            try CommunicationHandle(value: raw, kind: .phoneNumber)
        }
        #expect(error?.field == "value")
    }

    // MARK: Email addresses

    @Test(arguments: [
        ("mom@example.com", "mom@example.com"),
        ("Grandma.Rose@Example.COM", "grandma.rose@example.com"),
        ("  Coach.Miller@example.org\t", "coach.miller@example.org"),
        ("\nx@y\n", "x@y"),
        ("a@b", "a@b"),
        ("ÉLODIE@Exemple.FR", "élodie@exemple.fr"),
    ])
    func emailAddressesAreTrimmedAndLowercased(raw: String, normalized: String) throws {
        let handle = try CommunicationHandle(value: raw, kind: .emailAddress)
        #expect(handle.value == normalized, "\(quoted(raw))")
    }

    @Test(arguments: [
        "mom@home@example.com",        // two @
        "mom.example.com",             // no @
        "@example.com",                // empty local part
        "mom@",                        // empty domain
        "@",                           // both sides empty
        "  @  ",                       // both sides empty after trimming
        "mom smith@example.com",       // inner space
        "mom@exam ple.com",            // inner space in the domain
        "mom\t@example.com",           // inner tab
        "mom\u{00A0}x@example.com",    // inner no-break space
        "",                            // empty
        "   ",                         // only white space
    ])
    func invalidEmailAddressesAreRejected(raw: String) {
        let error = #expect(throws: PermissionModelError.self, "\(quoted(raw)) should be rejected") {
            try CommunicationHandle(value: raw, kind: .emailAddress)
        }
        #expect(error?.field == "value")
    }

    // MARK: Custom handles

    @Test(arguments: [
        "dragonslayer42",
        "Skater_Girl.99",
        " leading and trailing spaces ",
        "MiXeD CaSe",
        "émoji 🐉",
        "no\u{00A0}break",
        String(repeating: "a", count: 256),
        String(repeating: "é", count: 128),  // 256 bytes
    ])
    func customHandlesAreKeptUnchanged(raw: String) throws {
        let handle = try CommunicationHandle(value: raw, kind: .custom)
        #expect(handle.value == raw)
        #expect(Array(handle.value.unicodeScalars) == Array(raw.unicodeScalars), "not even Unicode-normalized")
    }

    @Test(arguments: [
        "",
        String(repeating: "a", count: 257),
        String(repeating: "é", count: 128) + "a",  // 257 bytes in 129 characters
        "bell\u{0007}",
        "new\nline",
        "carriage\rreturn",
        "tab\tbed",
        "nul\u{0000}",
        "del\u{007F}",
        "next line\u{0085}",
        "c1 end\u{009F}",
    ])
    func invalidCustomHandlesAreRejected(raw: String) {
        let error = #expect(throws: PermissionModelError.self, "\(quoted(raw)) should be rejected") {
            try CommunicationHandle(value: raw, kind: .custom)
        }
        #expect(error?.field == "value")
    }

    @Test func customHandlesAreCaseSensitive() throws {
        let a = try CommunicationHandle(value: "Skater_Girl.99", kind: .custom)
        let b = try CommunicationHandle(value: "skater_girl.99", kind: .custom)
        #expect(a != b)
        #expect(Set([a, b]).count == 2)
    }

    // MARK: Identity and order

    @Test func differentSpellingsOfOneHandleAreEqual() throws {
        let phone1 = try CommunicationHandle(value: "+1 (415) 555-0132", kind: .phoneNumber)
        let phone2 = try CommunicationHandle(value: "+1.415.555.0132", kind: .phoneNumber)
        #expect(phone1 == phone2)
        #expect(phone1.hashValue == phone2.hashValue)
        let mail1 = try CommunicationHandle(value: "Grandma.Rose@Example.COM", kind: .emailAddress)
        let mail2 = try CommunicationHandle(value: " grandma.rose@example.com ", kind: .emailAddress)
        #expect(mail1 == mail2)
        #expect(Set([phone1, phone2, mail1, mail2]).count == 2)
    }

    @Test func sameValueOfDifferentKindsIsNotTheSameHandle() throws {
        let custom = try CommunicationHandle(value: "5550100", kind: .custom)
        let phone = try CommunicationHandle(value: "5550100", kind: .phoneNumber)
        #expect(custom != phone)
        #expect(custom.value == phone.value)
    }

    @Test func kindsOrderByName() {
        #expect(CommunicationHandle.Kind.custom < .emailAddress)
        #expect(CommunicationHandle.Kind.emailAddress < .phoneNumber)
        #expect(CommunicationHandle.Kind.allCases.sorted() == [.custom, .emailAddress, .phoneNumber])
    }

    @Test func handlesOrderByKindThenValueByCodePoint() throws {
        let expected = [
            try CommunicationHandle(value: "Zed", kind: .custom),
            try CommunicationHandle(value: "alpha", kind: .custom),
            try CommunicationHandle(value: "zed", kind: .custom),
            try CommunicationHandle(value: "é", kind: .custom),
            try CommunicationHandle(value: "a@example.com", kind: .emailAddress),
            try CommunicationHandle(value: "b@example.com", kind: .emailAddress),
            try CommunicationHandle(value: "+15550100001", kind: .phoneNumber),
            try CommunicationHandle(value: "15550100001", kind: .phoneNumber),
            try CommunicationHandle(value: "5550100001", kind: .phoneNumber),
        ]
        for shuffled in [expected.reversed(), expected.shuffled(), Array(expected[4...] + expected[..<4])] {
            #expect(shuffled.sorted() == expected)
        }
        // Kind first: a custom handle sorts before any email, whatever its value.
        #expect(try CommunicationHandle(value: "zzz", kind: .custom) < CommunicationHandle(value: "a@b", kind: .emailAddress))
        #expect(!(expected[0] < expected[0]))
    }

    @Test func orderIsByCodePointNotByLocale() throws {
        // U+00E9 (é) is after "z" by code point, though a locale would put it before.
        let e = try CommunicationHandle(value: "é", kind: .custom)
        let z = try CommunicationHandle(value: "z", kind: .custom)
        #expect(z < e)
        // Upper case letters (U+0041...) come before lower case (U+0061...).
        #expect(try CommunicationHandle(value: "Z", kind: .custom) < CommunicationHandle(value: "a", kind: .custom))
    }

    /// Order and equality compare the values' bytes in one go; checked against a byte-at-a-time reference on
    /// every pair of a set of values that share prefixes, differ in length or in a multi-byte character.
    @Test func orderAndEqualityMatchAByteByByteReference() throws {
        let values = ["a", "ab", "abc", "abd", "abc\u{e9}", "abc\u{e8}", "b", "B", "\u{e9}", "e\u{301}", "\u{1F600}", "\u{1F600}a",
                      "z", "zz", "0", "09", "+1", "a b", String(repeating: "x", count: 250), String(repeating: "x", count: 249) + "y"]
        let handles = try values.map { try CommunicationHandle(value: $0, kind: .custom) }
            + values.filter { !$0.contains(" ") }.map { try CommunicationHandle(value: $0 + "@x", kind: .emailAddress) } + [try CommunicationHandle(value: "123", kind: .phoneNumber), try CommunicationHandle(value: "+123", kind: .phoneNumber)]
        for a in handles {
            for b in handles {
                let precedes = a.kind != b.kind ? a.kind < b.kind : a.value.utf8.lexicographicallyPrecedes(b.value.utf8)
                let same = a.kind == b.kind && a.value.utf8.elementsEqual(b.value.utf8)
                #expect((a < b) == precedes, "\(a) < \(b)")
                #expect((a == b) == same, "\(a) == \(b)")
            }
        }
    }

    /// Equality and order have to agree: two handles that are equal are not ordered before each other.
    @Test
    func equalityAgreesWithOrder() throws {
        let precomposed = try CommunicationHandle(value: "caf\u{e9}", kind: .custom)
        let decomposed = try CommunicationHandle(value: "cafe\u{301}", kind: .custom)
        if precomposed == decomposed {
            #expect(!(precomposed < decomposed) && !(decomposed < precomposed))
        } else {
            #expect(precomposed < decomposed || decomposed < precomposed)
            #expect(Set([precomposed, decomposed]).count == 2)
        }
    }
}
