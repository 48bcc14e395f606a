/// A system permission an app asks for, as permission-priming libraries track them.
public enum SystemPermission: String, Hashable, Sendable, CaseIterable, Comparable {
    /// The camera.
    case camera
    /// The microphone.
    case microphone
    /// The user's contacts.
    case contacts
    /// The photo library, to read and add photos.
    case photoLibrary
    /// The photo library, only to add photos to it.
    case photoLibraryAddOnly
    /// The device's location while the app is in use.
    case locationWhenInUse
    /// The device's location at any time, including in the background.
    case locationAlways
    /// Notifications from the app.
    case notifications
    /// The user's calendars.
    case calendars
    /// The user's reminders.
    case reminders
    /// Motion and fitness activity.
    case motion
    /// Health data.
    case health
    /// Bluetooth.
    case bluetooth
    /// Speech recognition.
    case speechRecognition
    /// Siri.
    case siri
    /// The media library (music and other media).
    case mediaLibrary
    /// Tracking the user across other companies' apps and websites (App Tracking Transparency).
    case tracking
    /// The local network.
    case localNetwork

    /// Permissions order by name, by code point.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The state of a permission: the user's answer to the app's own pre-prompt, or the system's.
    ///
    /// ISHPermissionKit's `ISHPermissionState` maps as Unknown → `notDetermined`, AskAgain → `askAgain`,
    /// Authorized → `authorized`, Denied → `denied`, DoNotAskAgain → `doNotAskAgain`, Unsupported → `unsupported`.
    public enum State: String, Hashable, Sendable, CaseIterable {
        /// The user has not answered yet: neither the app's pre-prompt nor the system's prompt.
        case notDetermined
        /// The user declined the app's pre-prompt for now; the app may ask again.
        case askAgain
        /// The user declined the app's pre-prompt and is not to be asked again.
        case doNotAskAgain
        /// The permission is granted.
        case authorized
        /// The permission is refused, in the system's prompt or in Settings.
        case denied
        /// The system restricts the permission (by parental controls or device management, say); the user
        /// cannot grant it.
        case restricted
        /// The system granted limited access (to some photos only, say).
        case limited
        /// The system granted the permission provisionally, without asking the user (quiet notifications).
        case provisional
        /// The device does not support the permission.
        case unsupported

        /// Whether the app may prompt: only in `notDetermined` and `askAgain`, as in ISHPermissionKit.
        public var canPrompt: Bool { self == .notDetermined || self == .askAgain }

        /// Whether the app can use the permission: `authorized`, `limited` or `provisional`.
        public var isGranted: Bool { self == .authorized || self == .limited || self == .provisional }
    }

    /// What caused a change of state.
    public enum Cause: String, Hashable, Sendable, CaseIterable {
        /// The user answered the app's own pre-prompt, shown before the system's.
        case prePrompt
        /// The user answered the system's prompt.
        case systemPrompt
        /// The user changed the permission in Settings.
        case settings
        /// The permission was reset (back to `notDetermined`, typically).
        case reset
        /// The app read the state from the system, without seeing what changed it.
        case inferred
    }
}
