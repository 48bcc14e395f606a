/// A system permission an app asks for, as permission-priming libraries track them.
public enum SystemPermission: String, Hashable, Sendable, CaseIterable, Comparable {
    case camera, microphone, contacts, photoLibrary, photoLibraryAddOnly, locationWhenInUse, locationAlways,
         notifications, calendars, reminders, motion, health, bluetooth, speechRecognition, siri, mediaLibrary,
         tracking, localNetwork

    /// Permissions order by name, by code point.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The state of a permission: the user's answer to the app's own pre-prompt, or the system's.
    ///
    /// ISHPermissionKit's `ISHPermissionState` maps as Unknown → `notDetermined`, AskAgain → `askAgain`,
    /// Authorized → `authorized`, Denied → `denied`, DoNotAskAgain → `doNotAskAgain`, Unsupported → `unsupported`.
    public enum State: String, Hashable, Sendable, CaseIterable {
        case notDetermined, askAgain, doNotAskAgain, authorized, denied, restricted, limited, provisional, unsupported

        /// Whether the app may prompt: only in `notDetermined` and `askAgain`, as in ISHPermissionKit.
        public var canPrompt: Bool { self == .notDetermined || self == .askAgain }

        /// Whether the app can use the permission: `authorized`, `limited` or `provisional`.
        public var isGranted: Bool { self == .authorized || self == .limited || self == .provisional }
    }

    /// What caused a change of state.
    public enum Cause: String, Hashable, Sendable, CaseIterable {
        case prePrompt, systemPrompt, settings, reset, inferred
    }
}
