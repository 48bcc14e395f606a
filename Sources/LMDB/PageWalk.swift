#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A structural check of one commit of an LMDB data file: every page its trees reach, read with `pread`
/// rather than through LMDB's memory map, so that no damage can make the check itself fault.
///
/// LMDB keeps no checksums and trusts what its pages say: a damaged page number, node offset or length
/// makes it read the wrong page, read outside the file (a `SIGBUS` or `SIGSEGV`) or fail one of its
/// assertions. The walk starts at the commit's meta page and visits the free list's tree, the main
/// database's tree and, through the main database's records, the tree of every named database, with
/// their overflow pages. Checked on each page: its header names its own page number, its flags are those
/// of its place (branch, leaf or overflow page), its node offsets and every key and value lie within it,
/// its children lie within the pages in use, and no page is reached twice. Checked on each tree: every
/// leaf is at the depth the tree's record gives, and its record's counts of branch, leaf and overflow
/// pages and of entries are those found. Checked last, as LMDB itself documents its file: every page
/// after the two meta pages up to the last page in use is either in a tree or listed once in the free
/// list, never both.
///
/// Not checked: the keys' order and the values' bytes (a caller checks what the values mean), and anything
/// of pages no tree reaches.
///
/// It reads every page in use once: O(pages in use). The layout read is LMDB 0.9's on a 64-bit platform
/// (`MDB_page`, `MDB_node` and `MDB_db` in `mdb.c`).
public struct PageWalk {
    /// Damage the walk found: what, in plain words, and where, as far as it is known.
    public struct Damage: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, naming the page.
        public var message: String
        /// The named database whose tree holds the damaged page, or `nil` for LMDB's own trees (the main
        /// database and the free list) and for pages of no tree.
        public var database: String?
        /// A key next to the damage, when one could be read: the first key of the damaged leaf page, else the
        /// key that leads to the damaged page from its parent. It lets a caller name the record (a `seq`, say)
        /// the damage is near.
        public var nearKey: [UInt8]?

        /// The damage as ``message`` says it.
        public var description: String { message }
    }

    /// What the walk found.
    public enum Outcome: Hashable, Sendable {
        /// Every check passed: the commit's trees use `pagesInUse` pages and the free list holds `freePages`.
        case consistent(pagesInUse: Int, freePages: Int)
        /// The first damage found.
        case damaged(Damage)
        /// Neither meta page holds the commit asked for any more, or the meta pages changed as they were read:
        /// a later commit replaced it. Walk the commit of a read transaction begun anew.
        case commitReplaced
    }

    // Page flags (`mp_flags`) and node flags (`mn_flags`) of mdb.c.
    private static let branch: UInt16 = 0x01, leaf: UInt16 = 0x02, overflow: UInt16 = 0x04, meta: UInt16 = 0x08
    private static let dirty: UInt16 = 0x10, leaf2: UInt16 = 0x20, keep: UInt16 = 0x8000
    private static let bigData: UInt16 = 0x01, subData: UInt16 = 0x02, dupData: UInt16 = 0x04
    /// `MDB_DUPSORT`, in a database's flags.
    private static let duplicateSort: UInt16 = 0x04
    /// The sizes of `MDB_page`'s header, of `MDB_node`'s header and of `MDB_db`.
    private static let pageHeader = 16, nodeHeader = 8, databaseRecord = 48
    /// LMDB's cursors hold at most 32 pages (`CURSOR_STACK`): a deeper tree is damaged.
    private static let maximumDepth = 32

    /// `MDB_db`: a tree's root, depth, page counts and flags.
    private struct Tree {
        var keySize: UInt32
        var flags: UInt16
        var depth: UInt16
        var branchPages: UInt64
        var leafPages: UInt64
        var overflowPages: UInt64
        var entries: UInt64
        var root: UInt64

        init(_ bytes: UnsafeRawBufferPointer) {
            func value<T: FixedWidthInteger>(_ offset: Int) -> T { T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self)) }
            keySize = value(0)
            flags = value(4)
            depth = value(6)
            branchPages = value(8)
            leafPages = value(16)
            overflowPages = value(24)
            entries = value(32)
            root = value(40)
        }
    }

    /// What the pages of one tree added up to.
    private struct Count {
        var branchPages: UInt64 = 0
        var leafPages: UInt64 = 0
        var overflowPages: UInt64 = 0
        var entries: UInt64 = 0
    }

    private let descriptor: Int32
    private let pageSize: Int
    private let lastPage: UInt64
    /// One bit a page: reached by a tree.
    private var reached: [UInt64]
    private var page: [UInt8]

    /// Walks the trees of the commit with transaction ID `transactionID` (by default the newest one) of the
    /// LMDB data file at `path` (such as `DIR/data.mdb`).
    ///
    /// Call it with the meta pages checked (``MetaPages/problem`` is `nil`). To walk a commit that other
    /// processes may be writing after, hold a read transaction of that commit meanwhile (its
    /// ``ReadTransaction/transactionID``): LMDB then reuses none of its pages.
    ///
    /// - Throws: ``LMDBError`` with the system's error when the file cannot be opened or read.
    public static func check(dataFile path: String, transactionID: UInt64? = nil) throws(LMDBError) -> Outcome {
        let pages = try MetaPages(dataFile: path)
        if let problem = pages.problem {
            // Read while a writer commits, the two meta pages and the file's size can come from different commits:
            // what changed between two reads is a writer at work, not damage.
            if transactionID != nil, try !MetaPages(dataFile: path).isSame(as: pages) { return .commitReplaced }
            return .damaged(Damage(message: "the data file's meta pages are damaged: \(problem)"))
        }
        let chosen = transactionID.map { id in pages.pages.firstIndex { $0.transactionID == id } } ?? pages.pages.firstIndex { $0 == pages.newest }
        guard let index = chosen else { return .commitReplaced }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw LMDBError(rawValue: errno) }
        defer { close(descriptor) }
        var walk = PageWalk(descriptor: descriptor, pageSize: Int(pages.pages[index].pageSize), lastPage: pages.pages[index].lastPage)
        do {
            return try walk.run(metaPage: index, transactionID: pages.pages[index].transactionID)
        } catch let damage as Damage {
            return .damaged(damage)
        } catch let error as LMDBError {
            throw error
        } catch {
            throw .invalid
        }
    }

    private init(descriptor: Int32, pageSize: Int, lastPage: UInt64) {
        self.descriptor = descriptor
        self.pageSize = pageSize
        self.lastPage = lastPage
        reached = [UInt64](repeating: 0, count: Int(lastPage / 64) + 1)
        page = [UInt8](repeating: 0, count: pageSize)
    }

    private mutating func run(metaPage index: Int, transactionID: UInt64) throws -> Outcome {
        try read(UInt64(index))
        // A later commit may have rewritten the meta page since it was chosen: its trees are not the ones a read
        // transaction keeps, nor is its last page the one the walk counts to.
        let recorded = page.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: MetaPages.transactionIDOffset, as: UInt64.self)) }
        guard recorded == transactionID else { return .commitReplaced }
        // MDB_meta after the page header: mm_magic, mm_version, mm_address, mm_mapsize, then the free list's and
        // the main database's MDB_db.
        let (freeList, main) = page.withUnsafeBytes { bytes in
            (Tree(UnsafeRawBufferPointer(rebasing: bytes[40..<88])), Tree(UnsafeRawBufferPointer(rebasing: bytes[88..<136])))
        }
        var databases: [(name: String, tree: Tree)] = []
        try walk(main, name: nil) { key, data, flags in
            guard flags & Self.subData != 0 else { return }
            guard data.count == Self.databaseRecord else {
                throw Damage(message: "the main database's record of \(Self.describe(key)) has \(data.count) bytes, not \(Self.databaseRecord)")
            }
            databases.append((String(decoding: key, as: UTF8.self), data.withUnsafeBytes { Tree($0) }))
        }
        for database in databases {
            try walk(database.tree, name: database.name)
        }
        var freePages: [UInt64] = []
        try walk(freeList, name: nil) { key, data, _ in
            // A record of the free list: the ID of the commit that freed the pages, then their count and numbers.
            let commit = Self.describe(key)
            guard data.count >= 8, data.count % 8 == 0 else {
                throw Damage(message: "the free list's record of commit \(commit) has \(data.count) bytes, not a list of page numbers")
            }
            let numbers = data.withUnsafeBytes { bytes in
                (0..<(data.count / 8)).map { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self)) }
            }
            guard numbers[0] <= UInt64(numbers.count - 1) else {
                throw Damage(message: "the free list's record of commit \(commit) claims \(numbers[0]) pages but has room for \(numbers.count - 1)")
            }
            freePages += numbers[1...].prefix(Int(numbers[0]))
        }
        return .consistent(pagesInUse: try account(freePages: freePages), freePages: freePages.count)
    }

    /// Checks that the free pages and the trees' pages together are every page after the meta pages, once;
    /// returns the number of pages the trees use.
    private func account(freePages: [UInt64]) throws -> Int {
        var listed = [UInt64](repeating: 0, count: reached.count)
        for number in freePages {
            guard number >= 2, number <= lastPage else {
                throw Damage(message: "the free list lists page \(number), outside pages 2...\(lastPage)")
            }
            let (word, bit) = (Int(number / 64), UInt64(1) << (number % 64))
            guard listed[word] & bit == 0 else { throw Damage(message: "the free list lists page \(number) twice") }
            guard reached[word] & bit == 0 else { throw Damage(message: "the free list lists page \(number), which a tree uses") }
            listed[word] |= bit
        }
        let used = reached.reduce(0) { $0 + $1.nonzeroBitCount }
        let accounted = UInt64(used + freePages.count) + 2
        guard accounted == lastPage + 1 else {
            let missing = (2...lastPage).first { number in
                let (word, bit) = (Int(number / 64), UInt64(1) << (number % 64))
                return (reached[word] | listed[word]) & bit == 0
            }
            throw Damage(message: """
                \(lastPage + 1 - accounted) of the pages in use belong to no tree and are not free\
                \(missing.map { " (the first is page \($0))" } ?? ""): a tree's page numbers are damaged
                """)
        }
        return used
    }

    // MARK: Trees

    /// Walks a tree and checks its record's counts; `visit` gets every leaf entry's key, value (read from its
    /// overflow pages too) and node flags.
    private mutating func walk(
        _ tree: Tree, name: String?, onEntry: (([UInt8], [UInt8], UInt16) throws -> Void)? = nil
    ) throws {
        let what = name.map { "the \($0) table" } ?? "LMDB's own tree"
        guard tree.root != .max else {
            guard tree.depth == 0, tree.entries == 0, tree.branchPages == 0, tree.leafPages == 0, tree.overflowPages == 0 else {
                throw Damage(message: "\(what) has no root page but claims \(tree.entries) entries", database: name)
            }
            return
        }
        guard tree.depth >= 1, tree.depth <= Self.maximumDepth else {
            throw Damage(message: "\(what) claims a depth of \(tree.depth)", database: name)
        }
        var count = Count()
        try visit(tree.root, level: 1, of: tree, name: name, count: &count, onEntry: onEntry)
        let found = (count.branchPages, count.leafPages, count.overflowPages)
        guard found == (tree.branchPages, tree.leafPages, tree.overflowPages) else {
            throw Damage(message: """
                \(what) claims \(tree.branchPages) branch, \(tree.leafPages) leaf and \(tree.overflowPages) overflow pages, \
                but its tree has \(found.0), \(found.1) and \(found.2)
                """, database: name)
        }
        guard tree.flags & Self.duplicateSort != 0 || count.entries == tree.entries else {
            throw Damage(message: "\(what) claims \(tree.entries) entries, but its leaf pages hold \(count.entries)", database: name)
        }
    }

    private mutating func visit(
        _ number: UInt64, level: Int, of tree: Tree, name: String?, count: inout Count,
        onEntry: (([UInt8], [UInt8], UInt16) throws -> Void)?
    ) throws {
        func damage(_ message: String, nearKey: [UInt8]? = nil) -> Damage {
            Damage(message: "page \(number) of \(name.map { "the \($0) table" } ?? "LMDB's own tree"): \(message)", database: name, nearKey: nearKey)
        }
        try claim(number, name: name)
        try read(number)
        let flags = u16(10) & ~(Self.dirty | Self.keep)
        let isLeaf = level == Int(tree.depth)
        let expected: Set<UInt16> = isLeaf ? [Self.leaf, Self.leaf | Self.leaf2] : [Self.branch]
        guard expected.contains(flags) else {
            throw damage("its flags (\(hex(flags))) are not those of a \(isLeaf ? "leaf" : "branch") page at depth \(level) of \(tree.depth)")
        }
        let (lower, upper) = (Int(u16(12)), Int(u16(14)))
        guard lower >= Self.pageHeader, (lower - Self.pageHeader) % 2 == 0, lower <= upper, upper <= pageSize else {
            throw damage("its bounds of free space (\(lower) and \(upper)) are impossible")
        }
        let keys = (lower - Self.pageHeader) / 2
        guard keys >= 1 else { throw damage("it holds no entries") }
        if flags & Self.leaf2 != 0 {
            // Keys of one size one after another, no nodes: a sorted-duplicates table's values.
            guard Self.pageHeader + keys * Int(tree.keySize) <= pageSize else { throw damage("its \(keys) keys of \(tree.keySize) bytes overrun it") }
            count.leafPages += 1
            count.entries += UInt64(keys)
            return
        }
        // Read the nodes before going down: the one page buffer is reused by the children.
        var children: [(page: UInt64, key: [UInt8])] = []
        var entries: [(key: [UInt8], flags: UInt16, data: [UInt8]?, overflow: (page: UInt64, size: Int)?)] = []
        for index in 0..<keys {
            let node = Int(u16(Self.pageHeader + 2 * index))
            guard node >= upper, node + Self.nodeHeader <= pageSize else {
                throw damage("node \(index) lies at \(node), outside the page's nodes (\(upper)..<\(pageSize))")
            }
            let (lo, hi, nodeFlags, keySize) = (u16(node), u16(node + 2), u16(node + 4), Int(u16(node + 6)))
            let keyStart = node + Self.nodeHeader
            guard keyStart + keySize <= pageSize else { throw damage("the key of node \(index) (\(keySize) bytes) runs past the page's end") }
            // Copied only where used: the keys of branch pages and of entries read, a leaf's first key, the key of a
            // value on overflow pages, and the key of a node found damaged, which names where the damage is.
            let readsEntry = onEntry != nil || nodeFlags & (Self.dupData | Self.bigData) != 0
            let nodeKey = page[keyStart..<(keyStart + keySize)]
            let key = !isLeaf || index == 0 || readsEntry ? Array(nodeKey) : []
            if !isLeaf {
                children.append((UInt64(lo) | UInt64(hi) << 16 | UInt64(nodeFlags) << 32, key))
                continue
            }
            let size = Int(lo) | Int(hi) << 16
            guard nodeFlags & ~(Self.bigData | Self.subData | Self.dupData) == 0 else {
                throw damage("node \(index) has the flags \(hex(nodeFlags))", nearKey: Array(nodeKey))
            }
            let dataStart = keyStart + keySize
            if nodeFlags & Self.bigData != 0 {
                guard dataStart + 8 <= pageSize else { throw damage("the overflow page number of node \(index) runs past the page's end", nearKey: Array(nodeKey)) }
                let first = page.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: dataStart, as: UInt64.self)) }
                entries.append((key, nodeFlags, nil, (first, size)))
            } else {
                guard dataStart + size <= pageSize else {
                    throw damage("the value of node \(index) (\(size) bytes) runs past the page's end", nearKey: Array(nodeKey))
                }
                entries.append((key, nodeFlags, readsEntry ? Array(page[dataStart..<(dataStart + size)]) : [], nil))
            }
        }
        if !isLeaf {
            count.branchPages += 1
            for (index, child) in children.enumerated() {
                // The first key of a branch page is empty: it stands for everything before the second.
                let nearKey = index == 0 ? children.dropFirst().first?.key : child.key
                guard child.page >= 2, child.page <= lastPage else {
                    throw damage("a child is page \(child.page), outside pages 2...\(lastPage)", nearKey: nearKey)
                }
                do {
                    try visit(child.page, level: level + 1, of: tree, name: name, count: &count, onEntry: onEntry)
                } catch var inner as Damage {
                    inner.nearKey = inner.nearKey ?? nearKey
                    throw inner
                }
            }
            return
        }
        count.leafPages += 1
        let firstKey = entries.first?.key
        for entry in entries {
            count.entries += 1
            var data = entry.data ?? []
            if let (first, size) = entry.overflow {
                do {
                    data = try readOverflow(first, size: size, name: name, count: &count, readsData: onEntry != nil || entry.flags & Self.dupData != 0)
                } catch var inner as Damage {
                    inner.nearKey = inner.nearKey ?? entry.key
                    throw inner
                }
            }
            if entry.flags & Self.dupData != 0, entry.flags & Self.subData != 0 {
                // A tree of the key's sorted duplicates, with a record (and counts) of its own.
                guard data.count == Self.databaseRecord else { throw damage("a tree of duplicates has a record of \(data.count) bytes", nearKey: firstKey) }
                try walk(data.withUnsafeBytes { Tree($0) }, name: name)
            }
            do {
                try onEntry?(entry.key, data, entry.flags)
            } catch var inner as Damage {
                inner.database = inner.database ?? name
                inner.nearKey = inner.nearKey ?? firstKey
                throw inner
            }
        }
    }

    /// Reads a value stored on overflow pages, checking their header and claiming them.
    private mutating func readOverflow(
        _ first: UInt64, size: Int, name: String?, count: inout Count, readsData: Bool
    ) throws -> [UInt8] {
        let pages = (Self.pageHeader - 1 + size) / pageSize + 1
        guard first >= 2, first <= lastPage, UInt64(pages) <= lastPage - first + 1 else {
            throw Damage(message: "a value of \(size) bytes is on overflow pages from \(first), outside pages 2...\(lastPage)", database: name)
        }
        try read(first)
        guard u16(10) & ~(Self.dirty | Self.keep) == Self.overflow else {
            throw Damage(message: "page \(first) should be an overflow page but has the flags \(hex(u16(10)))", database: name)
        }
        let stored = page.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) }
        guard Int(stored) == pages else {
            throw Damage(message: "overflow page \(first) says it is \(stored) pages long, but its value of \(size) bytes needs \(pages)", database: name)
        }
        for number in first..<(first + UInt64(pages)) { try claim(number, name: name) }
        count.overflowPages += UInt64(pages)
        guard readsData else { return [] }
        var data = [UInt8](repeating: 0, count: size)
        let read = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, off_t(first) * off_t(pageSize) + off_t(Self.pageHeader)) }
        guard read >= 0 else { throw LMDBError(rawValue: errno) }
        guard read == size else { throw Damage(message: "the value on overflow page \(first) runs past the end of the data file", database: name) }
        return data
    }

    // MARK: Pages

    /// Marks a page as reached, once.
    private mutating func claim(_ number: UInt64, name: String?) throws {
        guard number >= 2, number <= lastPage else {
            throw Damage(message: "a tree reaches page \(number), outside pages 2...\(lastPage)", database: name)
        }
        let (word, bit) = (Int(number / 64), UInt64(1) << (number % 64))
        guard reached[word] & bit == 0 else { throw Damage(message: "page \(number) is reached twice", database: name) }
        reached[word] |= bit
    }

    /// Reads page `number` into ``page`` and checks that its header names it.
    private mutating func read(_ number: UInt64) throws {
        let (descriptor, size) = (self.descriptor, pageSize)
        let count = page.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, off_t(number) * off_t(size)) }
        guard count >= 0 else { throw LMDBError(rawValue: errno) }
        guard count == size else { throw Damage(message: "page \(number) lies past the end of the data file") }
        let stored = page.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        guard stored == number else { throw Damage(message: "page \(number) says it is page \(stored)") }
    }

    private func u16(_ offset: Int) -> UInt16 { UInt16(page[offset]) | UInt16(page[offset + 1]) << 8 }

    /// A key as text for a message: a free-list key (8 bytes) as the commit ID it is, else its length alone
    /// (a key may hold personal data).
    private static func describe(_ key: [UInt8]) -> String {
        guard key.count == 8 else { return "a key of \(key.count) bytes" }
        return String(key.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) })
    }
}

private func hex<T: BinaryInteger>(_ value: T) -> String { "0x" + String(value, radix: 16) }
