import Foundation
internal import LMDB
import PermissionModel

/// What the rules learned of the ledger's state while writing: each a cache of what the tables hold,
/// so emptying one changes nothing but speed.
///
/// A write transaction starts from the cache its ledger's last commit left (``CarriedWriterCache``)
/// when no other write came in between, so that a server's stream of small transactions (group commits,
/// single appends) does not read every pending question's definition, subject, `handleSubjects` key and
/// subject's `handleSets` state again in each.
final class WriterCache {
    /// The pending questions' definitions (a question leaves when it stops being pending).
    var definitions: [UUID: QuestionDefinition] = [:]
    /// Subjects known to have events.
    var subjectsSeen: Set<ByteKey> = []
    /// The `handleSubjects` keys known to be stored: a subject's handle changes again and again, and each
    /// change would otherwise look its key up in the tree only to find it there.
    var handleSubjectsStored: Set<ByteKey> = []
    /// Per subject (its key prefix): where its `handleSets` records stand.
    var handleSetStates: [ByteKey: HandleSetState] = [:]

    /// Per subject (its bytes): the token hash of its handles under its current lookup key, with the tokens it
    /// made lately.
    var tokenHashers: [ByteKey: SubjectTokens] = [:]
    /// How many tokens the subjects of ``tokenHashers`` hold together: at most ``tokenLimit``, all forgotten when
    /// full. Not counted in ``capacity``, so that they do not make a carried cache too large to keep: they are
    /// bounded on their own.
    var tokensMade = 0
    let tokenLimit: Int

    /// A subject's token hash, and the tokens of the handles it made lately: a child's few contacts come back in
    /// event after event, and each would otherwise be hashed again (an HMAC) for its record and again for each of
    /// the rules' lookups.
    final class SubjectTokens {
        let hasher: TokenHasher
        var made: [CommunicationHandle: Token] = [:]

        init(hasher: TokenHasher) {
            self.hasher = hasher
        }
    }

    /// A handle's token (``TokenHasher/token(_:)``), and the handle as the tables hold it
    /// (``TokenHasher/tokenHandle(_:)``).
    struct Token {
        let bytes: [UInt8]
        let handle: CommunicationHandle
    }

    init(tokenLimit: Int = 65_536) {
        self.tokenLimit = tokenLimit
    }

    /// Per subject and day (its key prefix, then the day): what gives the keys of its events.
    var eventKeys: [ByteKey: EventKeys] = [:]
    /// Per subject (its key prefix): the last chunk of its handle values directory as written, with its values key
    /// (``HandleDirectory/PendingChunks``).
    var lastChunks: [ByteKey: HandleDirectory.PendingChunks.Chunk] = [:]
    /// The most entries of ``lastChunks``, each up to a chunk of handle values (fewer when the store writing with
    /// the cache has a lower limit, ``LMDBStore/cacheLimit``).
    static let lastChunkLimit = 4096

    /// Empties every cache: what a nested transaction committed is not in them.
    func removeAll() {
        definitions = [:]
        subjectsSeen = []
        handleSubjectsStored = []
        handleSetStates = [:]
        forgetKeys()
    }

    /// Empties the caches of keys and of what was made with them: an erasure destroys keys, and writes the
    /// handle values it keeps again under new ones.
    func forgetKeys() {
        tokenHashers = [:]
        tokensMade = 0
        eventKeys = [:]
        lastChunks = [:]
    }

    /// Forgets the tokens every subject made, keeping its token hash: when there are ``tokenLimit`` of them.
    func forgetTokens() {
        for subject in tokenHashers.values { subject.made = [:] }
        tokensMade = 0
    }

    /// How many entries the caches have room for together: a cache emptied while keeping its capacity
    /// (as a long write does when one fills) still holds that memory.
    var capacity: Int {
        definitions.capacity + subjectsSeen.capacity + handleSubjectsStored.capacity + handleSetStates.capacity
            + tokenHashers.capacity + eventKeys.capacity + lastChunks.capacity
    }
}

/// The ``WriterCache`` of a ledger's last committed write, handed to the next write only when that write
/// directly follows it: its LMDB transaction id is the next one, so nothing was committed in between, by
/// this process or any other, and the cache still describes the tables.
///
/// A write takes the cache before it changes anything and gives it back only once it has committed, so a
/// write that aborts (a rejected batch, a dry run, a map grown and the transaction run again, a failed
/// commit) leaves nothing behind, and the next write starts from an empty cache.
final class CarriedWriterCache: @unchecked Sendable {
    private let lock = NSLock()
    private var cache: WriterCache?
    private var committed = 0
    /// The most entries kept from one write to the next (counted by the room the caches hold, so that a
    /// cache a long write filled and emptied counts as large): a larger cache is dropped at the commit, so
    /// a long-running server holds a bounded amount of memory between writes.
    let limit: Int

    init(limit: Int = 100_000) {
        self.limit = limit
    }

    /// Runs `body` in a write transaction of `environment` with the cache for it (see
    /// ``take(forTransaction:)``), and keeps that cache for the next write once the transaction has committed.
    /// When the map has to grow, `environment` runs `body` again from scratch: the first run took the
    /// carried cache, so the second starts from an empty one.
    func write<T>(_ environment: Environment, _ body: (WriteTransaction, WriterCache) throws -> T) throws -> T {
        let (value, cache, transaction) = try environment.write { txn in
            let transaction = try txn.id()
            let cache = take(forTransaction: transaction)
            return (try body(txn, cache), cache, transaction)
        }
        keep(cache, committedTransaction: transaction)
        return value
    }

    /// The cache for a write transaction whose id is `transaction`: the last commit's, when that commit got
    /// the id just before, or a new one.
    func take(forTransaction transaction: Int) -> WriterCache {
        lock.withLock {
            defer { cache = nil }
            if let cache, transaction == committed + 1 { return cache }
            return WriterCache()
        }
    }

    /// Keeps `cache` for the next write, now that the write transaction `transaction` committed with it.
    func keep(_ cache: WriterCache, committedTransaction transaction: Int) {
        lock.withLock {
            guard cache.capacity <= limit else {
                self.cache = nil
                return
            }
            self.cache = cache
            committed = transaction
        }
    }
}
