import Foundation

/// What a ledger's directory must hold before LMDB opens it, and the making of a new one.
enum LedgerDirectory {
    /// Prepares the directory at `path` for ``Ledger/init(path:options:)``: refuses a path that holds something
    /// other than a ledger, and creates a missing directory (mode 0700) for a writable open.
    static func prepare(path: String, readOnly: Bool) throws(LedgerError) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = fm.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists && !isDirectory.boolValue {
            throw LedgerError(.notALedger, "\(path): not a ledger (it is a file; a ledger is a directory)")
        }
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        let hasData = fm.fileExists(atPath: dataFile)
        if readOnly {
            guard exists else { throw LedgerError(.missing, "\(path): no ledger here (the directory does not exist)") }
            guard hasData else { throw LedgerError(.notALedger, "\(path): not a ledger (no data.mdb in the directory)") }
        } else if !exists {
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw LedgerError(.storage, "\(path): cannot create the ledger directory: \(String(cString: strerror(errno)))")
            }
            chmod(path, 0o700)
        } else if !hasData, let contents = try? fm.contentsOfDirectory(atPath: path), !contents.isEmpty {
            throw LedgerError(.notALedger, "\(path): not a ledger (the directory holds other files and no data.mdb)")
        }
    }
}
