/// The directory that holds the file at `path`: what comes before its last `/` (extra slashes dropped), `/` for a
/// file at the root, `.` for a bare name.
///
/// Foundation's `NSString.deletingLastPathComponent` gives the same for the paths the ledger names, but stops the
/// process (SIGILL) on Linux for a bare name of one character (`K`, `K/`), which a user may give as `--key-file`,
/// `--out` or a backup's name.
func directory(holding path: String) -> String {
    var name = Substring(path)
    while name.count > 1, name.hasSuffix("/") { name.removeLast() }
    guard let slash = name.lastIndex(of: "/") else { return "." }
    var directory = name[..<slash]
    while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
    return directory.isEmpty ? "/" : String(directory)
}
