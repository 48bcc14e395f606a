internal import Crypto
import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A ledger's data keys, each wrapped by the ledger's key (``LedgerKey``), in slots of a file that the ledger
/// overwrites in place: `data-keys` in the ledger's directory.
///
/// The keys are not kept in LMDB: LMDB never overwrites a page in place but copies it, and the old copy stays in
/// the data file, readable, until LMDB happens to reuse the page. A key destroyed there would survive for an
/// unknown time. Here destroying a key overwrites its slot with zeros and flushes the file before it returns, so
/// no copy of the key is left in the directory (see docs/STORAGE.md, "Keys").
///
/// The file: a 64-byte header (`PLDKEYS1`, 16 bytes that name this store, the key check, zeros), then 64-byte slots, the
/// slot `n` at `64 + 64 n`. A slot holds AES-256-GCM's nonce (12 bytes), the sealed key (32) and its tag (16),
/// then 4 zero bytes; the additional data is `PermissionLedger data key`, the store's name and `n` (8 bytes,
/// big-endian), so that a slot moved or copied from another store does not open. A destroyed slot is 64 zeros.
/// The key check (bytes 24 to 51) is AES-256-GCM's nonce and tag of nothing, sealed under the ledger's key with
/// `PermissionLedger key check` and the store's name as additional data: it tells a wrong ledger key even when
/// every slot is destroyed. A store made before it had one holds zeros there, until a writer that opened one of its
/// keys writes it (``checkLedgerKey(writable:secrets:slotsInUse:)``).
package final class KeyStore: @unchecked Sendable {
    /// The file's name in the ledger's directory.
    package static let fileName = "data-keys"
    static let headerSize = 64
    static let slotSize = 64
    private static let magic = Array("PLDKEYS1".utf8)

    /// The file's path.
    package let path: String
    private var fd: Int32
    private let storeID: [UInt8]
    private let ledgerKey: LedgerKey

    /// The header's key check as the store was opened: zeros when it has none.
    private var keyCheck: [UInt8]
    private static let keyCheckRange = 24..<52

    private init(path: String, fd: Int32, storeID: [UInt8], keyCheck: [UInt8], ledgerKey: LedgerKey) {
        self.path = path
        self.fd = fd
        self.storeID = storeID
        self.keyCheck = keyCheck
        self.ledgerKey = ledgerKey
    }

    deinit { closeFile() }

    /// Closes the file: what ``Ledger/close()`` does last. Nothing may use the store afterwards.
    func closeFile() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    /// Opens the key store of the ledger directory at `directory`, creating it when `writable` and absent.
    /// Returns `nil` when it is absent and not to be created.
    package static func open(directory: String, ledgerKey: LedgerKey, writable: Bool, secrets: SecretSource) throws(LedgerError) -> KeyStore? {
        let path = directory + "/" + fileName
        do throws(OwnerOnlyFile.Problem) {
            var fd = try OwnerOnlyFile.openExisting(path, writable: writable, removingLeftover: writable)
            if fd == nil, writable {
                let storeID = secrets.bytes(16, for: "key store")
                var header = magic + storeID
                header += try keyCheck(ledgerKey, storeID: storeID, secrets: secrets, path: path)
                header += [UInt8](repeating: 0, count: headerSize - header.count)
                _ = try OwnerOnlyFile.create(path, contents: header)
                fd = try OwnerOnlyFile.openExisting(path, writable: true)
            }
            guard let fd else { return nil }
            let header: [UInt8]
            do {
                (header, _) = try readHeader(fd, path: path)
            } catch {
                close(fd)
                throw error
            }
            return KeyStore(path: path, fd: fd, storeID: Array(header[8..<24]), keyCheck: Array(header[keyCheckRange]), ledgerKey: ledgerKey)
        } catch {
            throw LedgerError(.notALedger, "key store \(error.description)")
        }
    }

    /// The header of the key store open at `fd`, and its number of slots.
    private static func readHeader(_ fd: Int32, path: String) throws(OwnerOnlyFile.Problem) -> (header: [UInt8], slots: UInt64) {
        var header = [UInt8](repeating: 0, count: headerSize)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, headerSize, 0) }
        var info = stat()
        guard count == headerSize, Array(header.prefix(8)) == magic, fstat(fd, &info) == 0,
              (Int(info.st_size) - headerSize) % slotSize == 0 else {
            throw OwnerOnlyFile.Problem(path: path, reason: "is not a ledger's key store, or is damaged")
        }
        return (header, UInt64((Int(info.st_size) - headerSize) / slotSize))
    }

    /// What is wrong with the key store of the ledger directory at `directory`, read without the ledger's key, for
    /// a ledger that keeps keys there and had used `slotsInUse` of them at its last commit that added one: missing,
    /// not an owner-only regular file, not a key store, or cut short. `nil` when nothing is.
    static func problem(directory: String, slotsInUse: UInt64) -> String? {
        let path = directory + "/" + fileName
        do throws(OwnerOnlyFile.Problem) {
            guard let fd = try OwnerOnlyFile.openExisting(path, writable: false) else { return missing(directory: directory) }
            defer { close(fd) }
            let (_, slots) = try readHeader(fd, path: path)
            return slots < slotsInUse ? cutShort(directory: directory, slots: slots, used: slotsInUse) : nil
        } catch {
            return "key store \(error.description)"
        }
    }

    /// What is wrong when the key store of the ledger directory at `directory` is missing, where the ledger keeps keys.
    static func missing(directory: String) -> String {
        "key store \(directory)/\(fileName) is missing, and the ledger holds keys kept in it: restore it from a backup (a new one would leave every sealed field unreadable)"
    }

    /// What is wrong when that key store holds fewer slots than the ledger recorded using.
    static func cutShort(directory: String, slots: UInt64, used: UInt64) -> String {
        "key store \(directory)/\(fileName) holds \(slots) keys where the ledger has used \(used): it is cut short; restore it from a backup"
    }

    /// The key check of a store named `storeID` under `ledgerKey`: a nonce (12 bytes) and the tag (16) of nothing.
    private static func keyCheck(_ ledgerKey: LedgerKey, storeID: [UInt8], secrets: SecretSource, path: String) throws(OwnerOnlyFile.Problem) -> [UInt8] {
        do {
            let nonce = try AES.GCM.Nonce(data: secrets.bytes(12, for: "key store check"))
            let sealed = try AES.GCM.seal(Data(), using: ledgerKey.key, nonce: nonce, authenticating: keyCheckData(storeID))
            return Array(sealed.nonce) + Array(sealed.tag)
        } catch {
            throw OwnerOnlyFile.Problem(path: path, reason: "cannot be made: the key check could not be sealed: \(error)")
        }
    }

    private static func keyCheckData(_ storeID: [UInt8]) -> [UInt8] { Array("PermissionLedger key check".utf8) + storeID }

    /// Checks that the ledger's key is this store's, before a writer wraps new keys under it: by the header's key
    /// check, or, in a store made before it had one, by the first slot not destroyed, after which a writable store
    /// gets its key check. A store whose every slot is destroyed and that has no key check cannot tell, and is
    /// taken as it is.
    ///
    /// The slots looked at are those the ledger has used (`slotsInUse`, 0 for a ledger that did not record it),
    /// and at most ``slotsLookedAtForTheKey`` otherwise: a store planted with a key check of zeros and a size of
    /// terabytes (sparse) is not read slot by slot without end.
    ///
    /// - Throws: `.damaged` when the key does not open the key check or that slot.
    func checkLedgerKey(writable: Bool, secrets: SecretSource, slotsInUse: UInt64) throws(LedgerError) {
        guard keyCheck.allSatisfy({ $0 == 0 }) else {
            do {
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: keyCheck.prefix(12)), ciphertext: Data(), tag: keyCheck.suffix(16))
                _ = try AES.GCM.open(box, using: ledgerKey.key, authenticating: Self.keyCheckData(storeID))
                return
            } catch {
                throw LedgerError(.damaged, "key store \(path): does not open with the ledger's key (\(ledgerKey.location)); the key file or the key store is not this ledger's, or is damaged")
            }
        }
        let slots = min(slotCount, slotsInUse > 0 ? slotsInUse : Self.slotsLookedAtForTheKey)
        var slot: UInt64 = 0
        while slot < slots, try key(slot: slot) == nil { slot += 1 }
        guard slot < slots, writable else { return }
        try locked(exclusive: true) { () throws(LedgerError) in
            let check: [UInt8]
            do throws(OwnerOnlyFile.Problem) {
                check = try Self.keyCheck(ledgerKey, storeID: storeID, secrets: secrets, path: path)
            } catch {
                throw LedgerError(.storage, "key store \(error.description)")
            }
            let count = check.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(Self.keyCheckRange.lowerBound)) }
            guard count == check.count else {
                throw LedgerError(.storage, "key store \(path): cannot be written: \(String(cString: strerror(errno)))")
            }
            try sync()
            keyCheck = check
        }
    }

    /// The most slots ``checkLedgerKey(writable:secrets:slotsInUse:)`` looks at for one not destroyed, in a store
    /// with no key check of a ledger that did not record how many it used.
    static let slotsLookedAtForTheKey: UInt64 = 1 << 16

    /// The number of slots, destroyed ones included.
    package var slotCount: UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return 0 }
        return UInt64(max(0, Int(info.st_size) - Self.headerSize) / Self.slotSize)
    }

    /// Wraps `key` into a new slot at the end of the file and returns the slot's number. The slot is durable
    /// only after ``sync()``: call it once for all the keys a commit needs, before that commit.
    func add(_ key: SymmetricKey, secrets: SecretSource) throws(LedgerError) -> UInt64 {
        try locked(exclusive: true) { () throws(LedgerError) -> UInt64 in
            let slot = slotCount
            let sealed: AES.GCM.SealedBox
            do {
                let nonce = try AES.GCM.Nonce(data: secrets.bytes(12, for: "key store slot \(slot)"))
                sealed = try key.withUnsafeBytes { bytes in
                    try AES.GCM.seal(Data(bytes), using: ledgerKey.key, nonce: nonce, authenticating: additionalData(slot))
                }
            } catch {
                throw LedgerError(.storage, "key store \(path): a data key could not be wrapped: \(error)")
            }
            var bytes = Array(sealed.combined!)
            bytes += [UInt8](repeating: 0, count: Self.slotSize - bytes.count)
            try write(bytes, at: slot)
            return slot
        }
    }

    /// Makes every slot written so far durable (`fdatasync`).
    package func sync() throws(LedgerError) {
        guard fdatasync(fd) == 0 else {
            throw LedgerError(.storage, "key store \(path): cannot be flushed: \(String(cString: strerror(errno)))")
        }
    }

    /// The data key in `slot`, or `nil` when it was destroyed.
    ///
    /// - Throws: `.damaged` when the slot does not open with the ledger's key: the key store is damaged, or
    ///   belongs to another ledger, or the key file is not this ledger's.
    func key(slot: UInt64) throws(LedgerError) -> SymmetricKey? {
        guard slot < UInt64(Int64.max - Int64(Self.headerSize)) / UInt64(Self.slotSize) else {
            throw LedgerError(.damaged, "key store \(path): has no key \(slot)")
        }
        var bytes = [UInt8](repeating: 0, count: Self.slotSize)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Self.slotSize, offset(slot)) }
        guard count == Self.slotSize else {
            // Past the end of the file (the store was cut short), or a read that failed.
            if count >= 0 { throw LedgerError(.damaged, "key store \(path): has no key \(slot)") }
            throw LedgerError(.storage, "key store \(path): cannot be read: \(String(cString: strerror(errno)))")
        }
        if bytes.allSatisfy({ $0 == 0 }) { return nil }
        do {
            let box = try AES.GCM.SealedBox(combined: bytes.prefix(60))
            return SymmetricKey(data: try AES.GCM.open(box, using: ledgerKey.key, authenticating: additionalData(slot)))
        } catch {
            throw LedgerError(.damaged, "key store \(path): key \(slot) does not open with the ledger's key (\(ledgerKey.location)); the key file or the key store is not this ledger's, or is damaged")
        }
    }

    /// The slots in `range` that do not hold zeros (not destroyed), read without opening them, many at a time.
    func heldSlots(in range: Range<UInt64>) throws(LedgerError) -> [UInt64] {
        let perRead: UInt64 = 4096
        var held: [UInt64] = []
        var bytes = [UInt8](repeating: 0, count: Int(perRead) * Self.slotSize)
        var first = range.lowerBound
        while first < range.upperBound {
            let count = Int(min(perRead, range.upperBound - first))
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count * Self.slotSize, offset(first)) }
            guard read == count * Self.slotSize else {
                if read >= 0 { throw LedgerError(.damaged, "key store \(path): has no key \(first + UInt64(max(0, read) / Self.slotSize))") }
                throw LedgerError(.storage, "key store \(path): cannot be read: \(String(cString: strerror(errno)))")
            }
            for index in 0..<count where bytes[(index * Self.slotSize)..<((index + 1) * Self.slotSize)].contains(where: { $0 != 0 }) {
                held.append(first + UInt64(index))
            }
            first += UInt64(count)
        }
        return held
    }

    /// Destroys the keys in `slots`: overwrites each slot with zeros and flushes the file before it returns.
    /// Destroying a destroyed slot again does nothing.
    package func destroy(_ slots: some Sequence<UInt64>) throws(LedgerError) {
        try locked(exclusive: true) { () throws(LedgerError) in
            let zeros = [UInt8](repeating: 0, count: Self.slotSize)
            for slot in slots where slot < slotCount { try write(zeros, at: slot) }
            try sync()
        }
    }

    /// Runs `body` holding the store's lock (`flock`), shared or exclusive: adding and destroying keys take it
    /// exclusively, a backup shares it, so that it copies the store as one state.
    package func locked<T>(exclusive: Bool, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try Self.locked(fd, path: path, exclusive: exclusive, body)
    }

    /// ``locked(exclusive:_:)`` of the key store file open at `fd`, for a reader that has no ledger key to open
    /// the store with (a backup taken without it).
    static func locked<T>(_ fd: Int32, path: String, exclusive: Bool, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw LedgerError(.storage, "key store \(path): cannot be locked: \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    private func offset(_ slot: UInt64) -> off_t { off_t(Self.headerSize) + off_t(slot) * off_t(Self.slotSize) }

    private func additionalData(_ slot: UInt64) -> [UInt8] {
        var data = Array("PermissionLedger data key".utf8) + storeID
        data.appendSeq(slot)
        return data
    }

    private func write(_ bytes: [UInt8], at slot: UInt64) throws(LedgerError) {
        let count = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, offset(slot)) }
        guard count == bytes.count else {
            throw LedgerError(.storage, "key store \(path): cannot be written: \(String(cString: strerror(errno)))")
        }
    }
}
