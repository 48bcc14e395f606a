import Foundation
import Testing

/// `cmark`, CommonMark's reference implementation, from Debian's `cmark`, installed by `Tools/setup.sh cmark` the
/// first time a test needs it: what a Markdown file the tool writes becomes when a viewer renders it. Where it
/// cannot be installed, the tests that need it are skipped with ``unavailableReason``.
enum CommonMark {
    static let unavailableReason: Comment = "cmark is not installed and Tools/setup.sh cmark could not install it: the test of the bundle README as rendered is skipped"

    static let executable = DebianPackage.program("cmark", at: ["/usr/bin/cmark"])

    /// The HTML that `cmark` makes of the Markdown file at `path`, raw HTML in it kept (`--unsafe`), as a viewer
    /// that trusts the file would show it.
    static func html(of path: String, sandbox: Sandbox) throws -> String {
        let cmark = try #require(executable, unavailableReason)
        let run = try sandbox.run(["--unsafe", path], program: URL(fileURLWithPath: cmark))
        try #require(run.status == 0, "\(run)")
        return run.out
    }
}
