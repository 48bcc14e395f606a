import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import PermissionModel

/// The fixed numeric codes of every enumeration in stored records. Never renumber; only append.
enum Codes {
    /// Each action's bit in a stored mask. A switch rather than a search of a list: an action's `==` and hash are
    /// its name's, and a question's mask is made for every `question.asked` appended.
    private static func bit(_ action: CommunicationTopic.Action) -> UInt64 {
        switch action {
        case .message: 0
        case .audioCall: 1
        case .videoCall: 2
        case .call: 3
        case .chat: 4
        case .follow: 5
        case .beFollowed: 6
        case .friend: 7
        case .connect: 8
        case .communicate: 9
        }
    }
    private static let actionOrder = CommunicationTopic.Action.allCases.sorted { bit($0) < bit($1) }
    static func actionMask(_ actions: Set<CommunicationTopic.Action>) -> UInt64 {
        var mask: UInt64 = 0
        for action in actions { mask |= 1 << bit(action) }
        return mask
    }
    static func actions(mask: UInt64) throws(EventRecord.DecodingError) -> Set<CommunicationTopic.Action> {
        guard mask >> UInt64(actionOrder.count) == 0 else { throw .init(reason: "unknown action bits") }
        return actionSets[Int(mask)]
    }

    /// The set of actions of every mask, made once: building a set hashes each action, and every
    /// `question.asked` read back from the log needs one.
    private static let actionSets: [Set<CommunicationTopic.Action>] = (0..<(1 << actionOrder.count)).map { mask in
        Set(actionOrder.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
    }

    private static let kinds: [CommunicationHandle.Kind] = [.phoneNumber, .emailAddress, .custom]
    static func kind(_ kind: CommunicationHandle.Kind) -> UInt8 { UInt8(kinds.firstIndex(of: kind)! + 1) }
    static func kind(_ code: UInt8) throws(EventRecord.DecodingError) -> CommunicationHandle.Kind {
        try lookup(kinds, code, "handle kind")
    }

    private static let askErrors: [AskError.Code] = [
        .communicationLimitsNotEnabled, .contactSyncNotSetup, .invalidQuestion, .notAvailable, .systemError, .unknown,
    ]
    static func askError(_ code: AskError.Code) -> UInt8 { UInt8(askErrors.firstIndex(of: code)! + 1) }
    static func askError(_ code: UInt8) throws(EventRecord.DecodingError) -> AskError.Code { try lookup(askErrors, code, "ask error") }

    private static let vias: [AnswerVia] = [.messages, .inPerson, .default]
    static func via(_ via: AnswerVia) -> UInt8 { UInt8(vias.firstIndex(of: via)! + 1) }
    static func via(_ code: UInt8) throws(EventRecord.DecodingError) -> AnswerVia { try lookup(vias, code, "via") }

    private static let permissions: [SystemPermission] = [
        .camera, .microphone, .contacts, .photoLibrary, .photoLibraryAddOnly, .locationWhenInUse, .locationAlways,
        .notifications, .calendars, .reminders, .motion, .health, .bluetooth, .speechRecognition, .siri, .mediaLibrary,
        .tracking, .localNetwork,
    ]
    static func permission(_ p: SystemPermission) -> UInt8 { UInt8(permissions.firstIndex(of: p)! + 1) }
    static func permission(_ code: UInt8) throws(EventRecord.DecodingError) -> SystemPermission { try lookup(permissions, code, "permission") }

    private static let states: [SystemPermission.State] = [
        .notDetermined, .askAgain, .doNotAskAgain, .authorized, .denied, .restricted, .limited, .provisional, .unsupported,
    ]
    static func state(_ s: SystemPermission.State) -> UInt8 { UInt8(states.firstIndex(of: s)! + 1) }
    static func state(_ code: UInt8) throws(EventRecord.DecodingError) -> SystemPermission.State { try lookup(states, code, "permission state") }

    private static let causes: [SystemPermission.Cause] = [.prePrompt, .systemPrompt, .settings, .reset, .inferred]
    static func cause(_ c: SystemPermission.Cause) -> UInt8 { UInt8(causes.firstIndex(of: c)! + 1) }
    static func cause(_ code: UInt8) throws(EventRecord.DecodingError) -> SystemPermission.Cause { try lookup(causes, code, "cause") }

    private static let bases: [Erasure.Basis] = [.guardianRequest, .accountDeleted, .retention, .other]
    static func basis(_ b: Erasure.Basis) -> UInt8 { UInt8(bases.firstIndex(of: b)! + 1) }
    static func basis(_ code: UInt8) throws(EventRecord.DecodingError) -> Erasure.Basis { try lookup(bases, code, "erasure basis") }

    private static func lookup<T>(_ table: [T], _ code: UInt8, _ what: String) throws(EventRecord.DecodingError) -> T {
        guard code >= 1, Int(code) <= table.count else { throw .init(reason: "unknown \(what) code \(code)") }
        return table[Int(code) - 1]
    }
}

extension EventRecord {
    static func type(tag: UInt8) -> EventType? {
        EventType.allCases.first { Self.tag($0) == tag }
    }
}
