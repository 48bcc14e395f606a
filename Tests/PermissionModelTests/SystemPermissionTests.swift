import PermissionModel
import Testing

@Suite struct SystemPermissionTests {
    @Test(arguments: SystemPermission.State.allCases)
    func canPromptOnlyWhenNotDeterminedOrAskAgain(state: SystemPermission.State) {
        #expect(state.canPrompt == (state == .notDetermined || state == .askAgain), "\(state)")
    }

    @Test(arguments: SystemPermission.State.allCases)
    func grantedOnlyWhenAuthorizedLimitedOrProvisional(state: SystemPermission.State) {
        #expect(state.isGranted == [.authorized, .limited, .provisional].contains(state), "\(state)")
    }

    @Test func statesAndPermissionsMatchTheSpec() {
        #expect(SystemPermission.State.allCases.map(\.rawValue) == [
            "notDetermined", "askAgain", "doNotAskAgain", "authorized", "denied", "restricted", "limited", "provisional", "unsupported",
        ])
        #expect(SystemPermission.allCases.count == 18)
        #expect(SystemPermission.Cause.allCases.map(\.rawValue) == ["prePrompt", "systemPrompt", "settings", "reset", "inferred"])
    }

    @Test func permissionsOrderByName() {
        let sorted = SystemPermission.allCases.sorted()
        #expect(sorted.map(\.rawValue) == SystemPermission.allCases.map(\.rawValue).sorted())
        #expect(sorted.first == .bluetooth)
        #expect(SystemPermission.photoLibrary < .photoLibraryAddOnly)
    }
}
