import Crypto
import Foundation
@_spi(StorageEngine) @testable import PermissionLedger
@testable import PermissionModel
import Testing

/// Table keys are built in one array each (`Keys`), and a few hot helpers replace standard library calls
/// that allocate or go byte by byte. Each must give exactly what the plain formula of docs/STORAGE.md, or the
/// call it replaces, gives: keys are on disk, and `verify` compares the kept tables with a rebuild made by
/// these very functions, so it could not catch a key that both get wrong.
@Suite struct KeyEncodingTests {
    /// The keys as STORAGE.md spells them, by concatenation.
    enum Reference {
        static func seq(_ s: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: s >> (56 - 8 * UInt64($0))) } }
        static func time(_ t: Timestamp) -> [UInt8] { seq(UInt64(bitPattern: t.microseconds) ^ (1 << 63)) }
        static func uuid(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }
        static func subjectPrefix(_ subject: String) -> [UInt8] { Array(subject.utf8) + [0] }
        static func handleOnly(_ handle: CommunicationHandle) -> [UInt8] {
            let kind: UInt8 = switch handle.kind {
            case .custom: 1
            case .emailAddress: 2
            case .phoneNumber: 3
            }
            let value = Array(handle.value.utf8)
            return value.count <= 200 ? [kind] + value + [0] : [kind, 0xFF] + Array(SHA256.hash(data: value))
        }
    }

    static let subjects = ["kid-ava", "", "ma\u{308}dchen", "\u{1F600}\u{1F600}", String(repeating: "s", count: 256)]
    static let handles: [CommunicationHandle] = [
        CommunicationHandle(normalizedValue: "+14155550100", kind: .phoneNumber),
        CommunicationHandle(normalizedValue: "ava@example.com", kind: .emailAddress),
        CommunicationHandle(normalizedValue: "gamer\u{E9}", kind: .custom),
        CommunicationHandle(normalizedValue: String(repeating: "a", count: 200), kind: .custom),
        CommunicationHandle(normalizedValue: String(repeating: "a", count: 201), kind: .custom),
        CommunicationHandle(normalizedValue: String(repeating: "\u{E9}", count: 150) + "@example.com", kind: .emailAddress),
    ]
    static let seqs: [UInt64] = [0, 1, 255, 256, 0x0102_0304_0506_0708, .max]
    static let times = [Timestamp(microseconds: 0), Timestamp(microseconds: -1), Timestamp(microseconds: 1_763_000_000_000_000), .earliest, .latest]
    static let ids = [UUID(), UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))]

    @Test func everyKeyEqualsItsFormula() {
        for s in Self.seqs {
            #expect(Keys.seq(s) == Reference.seq(s))
            #expect(Reference.seq(s).withUnsafeBytes(Keys.decodeSeq) == s)
        }
        for t in Self.times {
            #expect(Keys.time(t) == Reference.time(t))
            for id in Self.ids {
                #expect(Keys.expiry(t, question: id) == Reference.time(t) + Reference.uuid(id))
                #expect(Keys.asked(t, question: id) == Reference.time(t) + Reference.uuid(id))
            }
        }
        for id in Self.ids {
            #expect(Keys.uuid(id) == Reference.uuid(id))
            #expect(Keys.uuid(id).withUnsafeBytes(Keys.decodeUUID) == id)
        }
        for subject in Self.subjects {
            #expect(Keys.subjectPrefix(subject) == Reference.subjectPrefix(subject))
            for permission in SystemPermission.allCases {
                #expect(Keys.permission(subject: subject, permission) == Reference.subjectPrefix(subject) + Array(permission.rawValue.utf8) + [0])
            }
            for handle in Self.handles {
                #expect(Keys.handleOnly(handle) == Reference.handleOnly(handle), "\(handle.value.utf8.count) bytes")
                #expect(Keys.handle(subject: subject, handle) == Reference.subjectPrefix(subject) + Reference.handleOnly(handle))
                #expect(Keys.handleSubject(handle, subject: subject) == Reference.handleOnly(handle) + Array(subject.utf8))
                for s in Self.seqs {
                    #expect(Keys.versioned(Keys.handle(subject: subject, handle), s)
                        == Reference.subjectPrefix(subject) + Reference.handleOnly(handle) + Reference.seq(s))
                }
            }
        }
    }

    @Test func aVersionedKeyLeavesTheEntityItCameFromAlone() {
        let entity = Keys.subjectPrefix("kid-ava")
        let versioned = Keys.versioned(entity, 7)
        #expect(entity == Reference.subjectPrefix("kid-ava"))
        #expect(versioned == Reference.subjectPrefix("kid-ava") + Reference.seq(7))
    }

    @Test func copiedAndComparedBytesEqualTheStandardLibrarys() {
        for length in [0, 1, 31, 32, 33, 500] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            bytes.withUnsafeBytes { buffer in
                #expect([UInt8](copying: buffer) == bytes)
                #expect(bytes.hasSameBytes(as: buffer))
                if length > 0 {
                    var other = bytes
                    other[length / 2] ^= 1
                    #expect(!other.hasSameBytes(as: buffer))
                    #expect(!Array(bytes.dropLast()).hasSameBytes(as: buffer))
                }
            }
        }
        // The chain hash copies its digest out with `init(copying:)`.
        let record = Array("chain".utf8)
        #expect(chainHash(previous: .genesis, record: record).bytes == Array(SHA256.hash(data: ChainHash.genesis.bytes + record)))
    }

    @Test func everyActionMaskDecodesToItsActions() throws {
        let order = Array(CommunicationTopic.Action.allCases)
        for mask in 0..<(1 << order.count) {
            let expected = Set(order.indices.filter { mask & (1 << $0) != 0 }.map { order[$0] })
            let actions = try Codes.actions(mask: UInt64(mask))
            #expect(actions == expected)
            #expect(Codes.actionMask(actions) == UInt64(mask))
        }
        #expect(throws: (any Error).self) { try Codes.actions(mask: 1 << UInt64(order.count)) }
    }

    /// Observations of up to 16 handles are checked pairwise; longer ones through sets. Both must fold and
    /// refuse alike.
    @Test(arguments: [3, 16, 17, 40])
    func observationsFoldAndRefuseAlikeAtEverySize(count: Int) throws {
        let handles = (0..<count).map { CommunicationHandle(normalizedValue: "friend-\($0)", kind: .custom) }
        let clean = try PermissionEvent.Payload.handlesObserved(checking: handles, known: Array(handles.prefix(2)))
        #expect(clean == .handlesObserved(checked: handles, known: Array(handles.prefix(2))))

        let folded = try PermissionEvent.Payload.handlesObserved(checking: handles + [handles[0]], known: [handles[1], handles[1]])
        #expect(folded == .handlesObserved(checked: handles, known: [handles[1]]))

        let stranger = CommunicationHandle(normalizedValue: "stranger", kind: .custom)
        #expect(throws: PermissionModelError.self) {
            try PermissionEvent.Payload.handlesObserved(checking: handles, known: [handles[0], stranger])
        }
        #expect(throws: PermissionModelError.self) { try PermissionEvent.Payload.handlesObserved(checking: [], known: []) }
    }

    @Test func controlCharactersAreFoundByTheByteScan() {
        let cases: [(String, Bool)] = [
            ("kid-ava", false), ("", false), ("tab\there", true), ("nul\u{0}", true), ("del\u{7F}", true),
            ("c1\u{85}", true), ("c1 end\u{9F}", true), ("latin \u{A0}\u{E9}", false), ("\u{1F600}", false),
        ]
        for (text, expected) in cases {
            let reference = text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
            #expect(reference == expected, "\(text.debugDescription)")
            #expect(text.utf8.containsControlCharacter == expected, "\(text.debugDescription)")
        }
    }
}
