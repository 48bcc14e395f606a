import Foundation
import Testing

/// `cmark`, CommonMark's reference implementation, from Debian's `cmark`, installed by `Tools/setup.sh cmark` the
/// first time a test needs it: what a Markdown file the tool writes becomes when a viewer renders it.
enum CommonMark {
    static let unavailableReason: Comment = "cmark is not installed and Tools/setup.sh cmark could not install it"

    static let executable: String? = {
        func found() -> String? { FileManager.default.isExecutableFile(atPath: "/usr/bin/cmark") ? "/usr/bin/cmark" : nil }
        if let path = found() { return path }
        let child = try? ChildProcess.start(
            "/bin/bash", [packageRoot.appendingPathComponent("Tools/setup.sh").path, "cmark"],
            environment: ProcessInfo.processInfo.environment, directory: packageRoot.path,
            stdin: FileHandle.nullDevice.fileDescriptor, stdout: FileHandle.nullDevice.fileDescriptor,
            stderr: FileHandle.nullDevice.fileDescriptor)
        _ = child?.wait()
        return found()
    }()

    /// The HTML that `cmark` makes of the Markdown file at `path`, raw HTML in it kept (`--unsafe`), as a viewer
    /// that trusts the file would show it.
    static func html(of path: String, sandbox: Sandbox) throws -> String {
        let cmark = try #require(executable, unavailableReason)
        let run = try sandbox.run(["--unsafe", path], program: URL(fileURLWithPath: cmark))
        try #require(run.status == 0, "\(run)")
        return run.out
    }
}
