import Foundation

/// A program from a Debian package that some tests need: found where Debian puts it, else installed by
/// `Tools/setup.sh PACKAGE` (apt-get, through sudo when not root) and looked for again. `nil` where it cannot be
/// installed (no package source, not root and no sudo): the tests that need it then say why they are skipped.
enum DebianPackage {
    static func program(_ package: String, at paths: [String]) -> String? {
        func found() -> String? { paths.first { FileManager.default.isExecutableFile(atPath: $0) } }
        if let path = found() { return path }
        let child = try? ChildProcess.start(
            "/bin/bash", [packageRoot.appendingPathComponent("Tools/setup.sh").path, package],
            environment: ProcessInfo.processInfo.environment, directory: packageRoot.path,
            stdin: FileHandle.nullDevice.fileDescriptor, stdout: FileHandle.nullDevice.fileDescriptor,
            stderr: FileHandle.nullDevice.fileDescriptor)
        _ = child?.wait()
        return found()
    }
}
