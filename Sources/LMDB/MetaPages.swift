#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The two meta pages at the start of an LMDB data file, read from the file's bytes rather than through LMDB.
///
/// LMDB keeps two meta pages and writes the commit with transaction ID *t* to page *t* mod 2, so that
/// after *N* ≥ 1 commits the pages hold *N* and *N* − 1. On opening it silently uses the page with the
/// higher ID among those whose magic and version are right. A damaged ID can therefore make LMDB show
/// the previous commit, a consistent but older state, without any error; a damaged page size, last page
/// or root can make it read outside the file. ``problem`` checks what can be checked without LMDB.
///
/// The layout read is LMDB 0.9's on a 64-bit platform (`MDB_page` header, then `MDB_meta`).
public struct MetaPages: Sendable {
    /// One meta page as stored.
    public struct Page: Hashable, Sendable {
        /// The page number in its header (`mp_pgno`): 0 or 1.
        public var pageNumber: UInt64
        /// The page's flags (`mp_flags`): a meta page has `P_META`.
        public var flags: UInt16
        /// LMDB's magic number (`mm_magic`), `0xBEEFC0DE` in an LMDB file.
        public var magic: UInt32
        /// The data format version (`mm_version`).
        public var version: UInt32
        /// The map size of the commit (`mm_mapsize`).
        public var mapSize: UInt64
        /// The page size (`mm_psize`).
        public var pageSize: UInt32
        /// The free list's database flags (`mm_dbs[FREE_DBI].md_flags`, which also hold the environment's flags).
        public var freeListFlags: UInt16
        /// The root page of the free list (`mm_dbs[FREE_DBI].md_root`), `UInt64.max` when empty.
        public var freeListRoot: UInt64
        /// The main database's flags (`mm_dbs[MAIN_DBI].md_flags`).
        public var mainFlags: UInt16
        /// The root page of the main database (`mm_dbs[MAIN_DBI].md_root`), `UInt64.max` when empty.
        public var mainRoot: UInt64
        /// The last page in use (`mm_last_pg`).
        public var lastPage: UInt64
        /// The ID of the commit this page describes (`mm_txnid`).
        public var transactionID: UInt64

        /// Whether the page carries LMDB's magic number.
        public var hasMagic: Bool { magic == MetaPages.magic }
    }

    /// LMDB's magic number (`MDB_MAGIC`).
    public static let magic: UInt32 = 0xBEEF_C0DE
    /// The data format version of LMDB 0.9 (`MDB_DATA_VERSION`).
    public static let dataVersion: UInt32 = 1
    /// The bytes read of each meta page: the page header (16) and `MDB_meta` (136 on 64-bit platforms).
    static let headerSize = 16
    static let readSize = headerSize + 136
    /// Where a meta page holds its commit's transaction ID (`mm_txnid`): after the page header, `mm_magic`,
    /// `mm_version`, `mm_address` and `mm_mapsize` (24 bytes), the two `MDB_db` (96) and `mm_last_pg` (8).
    static let transactionIDOffset = headerSize + 128

    /// The meta pages found, in file order: two, or fewer when the file is too short.
    public let pages: [Page]
    /// The size of the data file in bytes, when the pages were read.
    public let fileSize: Int
    /// The data file's path.
    public let path: String

    /// Reads the meta pages of the LMDB data file at `path` (such as `DIR/data.mdb`).
    ///
    /// The second page is looked for at the page size the first one gives, else at the system's page size.
    ///
    /// - Throws: ``LMDBError`` with the system's error when the file cannot be opened or read.
    public init(dataFile path: String) throws(LMDBError) {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw LMDBError(rawValue: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw LMDBError(rawValue: errno) }
        fileSize = Int(status.st_size)
        var pages: [Page] = []
        if let first = try Self.readPage(descriptor, at: 0) {
            pages.append(first)
            let systemPageSize = UInt32(sysconf(Int32(_SC_PAGESIZE)))
            let offset = Self.isPlausiblePageSize(first.pageSize) ? first.pageSize : systemPageSize
            if let second = try Self.readPage(descriptor, at: off_t(offset)) { pages.append(second) }
        }
        self.pages = pages
    }

    /// Whether `other` read the same meta pages of a file of the same size.
    func isSame(as other: MetaPages) -> Bool {
        pages == other.pages && fileSize == other.fileSize
    }

    private static func readPage(_ descriptor: Int32, at offset: off_t) throws(LMDBError) -> Page? {
        var buffer = [UInt8](repeating: 0, count: readSize)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, readSize, offset) }
        guard count >= 0 else { throw LMDBError(rawValue: errno) }
        guard count == readSize else { return nil }
        return buffer.withUnsafeBytes { bytes in
            func value<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            let meta = headerSize
            // MDB_db: md_pad (u32), md_flags (u16), md_depth (u16), 4 counts (u64 each), md_root (u64): 48 bytes.
            let free = meta + 24
            let main = free + 48
            return Page(
                pageNumber: value(0, UInt64.self), flags: value(10, UInt16.self),
                magic: value(meta, UInt32.self), version: value(meta + 4, UInt32.self),
                mapSize: value(meta + 16, UInt64.self), pageSize: value(free, UInt32.self),
                freeListFlags: value(free + 4, UInt16.self), freeListRoot: value(free + 40, UInt64.self),
                mainFlags: value(main + 4, UInt16.self), mainRoot: value(main + 40, UInt64.self),
                lastPage: value(main + 48, UInt64.self), transactionID: value(transactionIDOffset, UInt64.self))
        }
    }

    private static func isPlausiblePageSize(_ size: UInt32) -> Bool {
        size >= 512 && size <= 65536 && size & (size - 1) == 0
    }

    /// Whether the file looks like an LMDB data file at all: one of its meta pages has LMDB's magic number.
    public var isLMDBFile: Bool { pages.contains { $0.hasMagic } }

    /// What is wrong with the meta pages, in plain words, or `nil` when they are consistent.
    ///
    /// Checked: each page is a meta page numbered 0 or 1, with LMDB's magic, version 1 and the same
    /// plausible page size; its last page lies within the file, its roots within its pages and its map
    /// size holds them; page *i* holds an even (*i* = 0) or odd (*i* = 1) transaction ID, the two IDs are
    /// consecutive (or both 0, a new file), and the newer commit uses no fewer pages than the older
    /// (LMDB never gives pages back to the file system).
    ///
    /// What cannot be seen here: damage that leaves every check satisfied. Most notably, a damaged ID of
    /// the newer page that turns *N* into *N* − 2 (one bit of *N*) keeps the IDs consecutive with the
    /// right parities: LMDB then shows commit *N* − 1, and this check notices only when commit *N* grew
    /// the file.
    public var problem: String? {
        guard pages.count == 2 else {
            return "the data file (\(fileSize) bytes) is too short to hold LMDB's two meta pages"
        }
        for (index, page) in pages.enumerated() {
            let name = "meta page \(index)"
            guard page.flags & 0x08 != 0 else { return "\(name) is not marked as a meta page (flags \(hex(page.flags)))" }
            guard page.pageNumber == UInt64(index) else { return "\(name) says it is page \(page.pageNumber)" }
            guard page.hasMagic else { return "\(name) lacks LMDB's magic number (\(hex(page.magic)))" }
            guard page.version == Self.dataVersion else { return "\(name) has data version \(page.version), not \(Self.dataVersion)" }
            guard Self.isPlausiblePageSize(page.pageSize) else { return "\(name) gives an impossible page size (\(page.pageSize))" }
            guard page.pageSize == pages[0].pageSize else {
                return "the meta pages disagree on the page size (\(pages[0].pageSize) and \(page.pageSize))"
            }
            let pageSize = UInt64(page.pageSize)
            let filePages = UInt64(fileSize) / pageSize
            guard page.lastPage >= 1, page.lastPage < filePages else {
                return "\(name) says the last page in use is \(page.lastPage), but the file has \(filePages) pages"
            }
            // LMDB maps what a meta page says when it is not told a size; the wrapper never grows a map past 1 TiB.
            guard page.mapSize >= (page.lastPage + 1) * pageSize, page.mapSize <= UInt64(Environment.maximumMapSize) else {
                return "\(name) gives a map size (\(page.mapSize) bytes) that cannot hold its \(page.lastPage + 1) pages"
            }
            for (tree, root) in [("free list", page.freeListRoot), ("main database", page.mainRoot)]
            where root != .max && (root < 2 || root > page.lastPage) {
                return "\(name) puts the root of the \(tree) at page \(root), outside pages 2...\(page.lastPage)"
            }
            // The free list is keyed by integers; the only environment flags that may be stored with it are
            // MDB_FIXEDMAP and MDB_NOSUBDIR. The main database of a ledger has no flags.
            guard page.freeListFlags & ~0x4001 == 0x08 else { return "\(name) gives the free list flags \(hex(page.freeListFlags))" }
            guard page.mainFlags == 0 else { return "\(name) gives the main database flags \(hex(page.mainFlags))" }
        }
        let (even, odd) = (pages[0].transactionID, pages[1].transactionID)
        if even == 0 && odd == 0 { return nil }
        guard even % 2 == 0, odd % 2 == 1 else {
            return "the meta pages hold transaction IDs \(even) and \(odd): page 0 must hold an even one, page 1 an odd one"
        }
        guard even &+ 1 == odd || odd &+ 1 == even else {
            return "the meta pages hold transaction IDs \(even) and \(odd), which are not consecutive commits"
        }
        let (newer, older) = even > odd ? (pages[0], pages[1]) : (pages[1], pages[0])
        guard newer.lastPage >= older.lastPage else {
            return """
                the newer commit (\(newer.transactionID)) uses fewer pages than the older (\(older.transactionID)): \
                \(newer.lastPage + 1) and \(older.lastPage + 1)
                """
        }
        return nil
    }

    /// The number of entries LMDB records for the named database `name` in the commit `page` describes,
    /// read from the data file's pages (the main database's tree, then the database's record there).
    ///
    /// Both meta pages' commits are intact in a healthy file (LMDB reuses a page only once no meta page
    /// refers to a tree holding it), so this reads the commit LMDB does not show as well. Damaged pages
    /// give `nil`, not a crash: every offset is checked against the page.
    ///
    /// - Returns: the count, or `nil` when the database or a page on the way cannot be read.
    public func entries(ofDatabase name: String, in page: Page) -> UInt64? {
        guard page.pageSize > 0 else { return nil }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let pageSize = Int(page.pageSize)
        let key = Array(name.utf8)
        var number = page.mainRoot
        // A tree deeper than LMDB's cursor stack (32) is damaged.
        for _ in 0..<32 {
            guard number >= 2, number <= page.lastPage else { return nil }
            var bytes = [UInt8](repeating: 0, count: pageSize)
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, pageSize, off_t(number) * off_t(pageSize)) }
            guard count == pageSize else { return nil }
            guard let found = Self.search(bytes, for: key) else { return nil }
            switch found {
            case .child(let child): number = child
            case .record(let record):
                // MDB_db: md_pad, md_flags, md_depth, md_branch_pages, md_leaf_pages, md_overflow_pages, md_entries, md_root.
                guard record.count >= 48 else { return nil }
                return record.dropFirst(32).prefix(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
        return nil
    }

    private enum Found { case child(UInt64), record(ArraySlice<UInt8>) }

    /// In a branch page, the child whose range holds `key`; in a leaf page, the data of the node with `key`.
    private static func search(_ page: [UInt8], for key: [UInt8]) -> Found? {
        func u16(_ offset: Int) -> Int? { offset + 2 <= page.count ? Int(page[offset]) | Int(page[offset + 1]) << 8 : nil }
        guard let flags = u16(10), let lower = u16(12), lower >= headerSize, lower <= page.count else { return nil }
        let isBranch = flags & 0x01 != 0
        guard isBranch || flags & 0x02 != 0 else { return nil }
        var chosen: Found?
        for index in 0..<(lower - headerSize) / 2 {
            // MDB_node: mn_lo, mn_hi (data size, or with mn_flags the child's page number), mn_flags, mn_ksize, key, data.
            guard let node = u16(headerSize + 2 * index), node + 8 <= page.count,
                let lo = u16(node), let hi = u16(node + 2), let nodeFlags = u16(node + 4), let keySize = u16(node + 6),
                node + 8 + keySize <= page.count
            else { return nil }
            let nodeKey = page[(node + 8)..<(node + 8 + keySize)]
            if isBranch {
                // The first key of a branch page is empty (it stands for everything before the second).
                guard index == 0 || !key.lexicographicallyPrecedes(nodeKey) else { break }
                chosen = .child(UInt64(lo) | UInt64(hi) << 16 | UInt64(nodeFlags) << 32)
            } else if nodeKey.elementsEqual(key) {
                let size = lo | hi << 16
                let start = node + 8 + keySize
                guard nodeFlags & 0x02 != 0, start + size <= page.count else { return nil }
                return .record(page[start..<(start + size)])
            }
        }
        return chosen
    }

    /// The page LMDB opens with: the one with the higher transaction ID (page 0 when they are equal).
    public var newest: Page? {
        guard pages.count == 2 else { return pages.first }
        return pages[1].transactionID > pages[0].transactionID ? pages[1] : pages[0]
    }
}

private func hex<T: BinaryInteger>(_ value: T) -> String { "0x" + String(value, radix: 16) }
