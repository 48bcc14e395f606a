import Foundation
internal import LMDB

extension Ledger {
    /// Closes the ledger: finishes the appends already submitted, ends every subscription, waits for the reads
    /// in progress, and closes the ledger's files, so that the same path can be opened again in this process.
    ///
    /// Afterwards every call of this `Ledger`, and of every ``SubjectLedger`` made from it, throws a
    /// ``LedgerError`` of kind `.closed`; the subscriptions' sequences finish (their `next()` returns
    /// `nil`). Closing a closed ledger does nothing. The waiting is done off the cooperative thread pool.
    ///
    /// The writer thread (and the thread that flushes commits to disk, for a durable ledger) is started when
    /// the ledger opens for writing and ends here, after the last queued append; without `close()` it ends
    /// when the last reference to the `Ledger` goes.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            startThread(named: "ledger-close") { [self] in
                closeNow()
                continuation.resume()
            }
        }
    }

    /// ``close()``, blocking the calling thread: not in a read or write of this ledger.
    func closeNow() {
        guard !isClosed else { return }
        committer?.stop()
        fileSync?.close()
        watch.close()
        // Waits for the transactions in progress; throws only inside one of this thread's, which is a misuse.
        try? environment.close()
        tables.keyRing?.store.closeFile()
        options.logger.info("closed the ledger", metadata: ["path": "\(path)", "appendCalls": "\(writerStatistics.requests)"])
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { watch.isClosed }
}
