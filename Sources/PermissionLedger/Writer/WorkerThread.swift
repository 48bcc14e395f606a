import Foundation
internal import LMDB
import PermissionModel

/// A thread that works through a queue: it waits for items, takes some (`take` says how many of those
/// waiting, at least one) and hands them to `work`, until stopped.
final class WorkerThread<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []
    private var working = 0
    private var stopping = false
    private var running = true
    /// What the thread runs, dropped by the thread itself before ``stop()`` returns: `work` may hold the
    /// environment, which must be closed by the time whoever stopped the thread goes on (a ledger reopened
    /// right after it was released would otherwise find it still open in this process).
    private var take: (([Item]) -> Int)?
    private var work: (([Item]) -> Void)?

    init(name: String, take: @escaping ([Item]) -> Int, work: @escaping ([Item]) -> Void) {
        self.take = take
        self.work = work
        startThread(named: name) { [self] in run() }
    }

    /// How many items wait, and how many are being worked on.
    var load: (waiting: Int, working: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (items.count, working)
    }

    /// Queues `item`; `false` once the thread is stopping.
    func submit(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        items.append(item)
        condition.signal()
        return true
    }

    /// Works through what is queued, then ends the thread and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while items.isEmpty && !stopping { condition.wait() }
            if items.isEmpty {
                condition.unlock()
                // Only this thread uses them. Released out of the lock (releasing `work` may close the
                // environment), and before `stop` returns.
                (take, work) = (nil, nil)
                condition.lock()
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let count = max(1, min(items.count, take!(items)))
            let taken = Array(items[..<count])
            items.removeFirst(count)
            working = count
            let work = self.work!
            condition.unlock()
            work(taken)
            condition.lock()
            working = 0
            condition.unlock()
        }
    }
}

/// What a thread started by ``startThread(named:_:)`` runs.
private final class ThreadBody {
    let run: () -> Void
    init(run: @escaping () -> Void) { self.run = run }
}

/// Starts a detached POSIX thread running `body` (a plain pthread: the ledger's writer and flusher need
/// nothing of Foundation's `Thread`). `name` says what it is in a failure message.
func startThread(named name: String, _ body: @escaping () -> Void) {
    let context = Unmanaged.passRetained(ThreadBody(run: body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
        body.run()
        return nil
    }, context)
    precondition(status == 0, "cannot start the \(name) thread: \(String(cString: strerror(status)))")
    pthread_detach(thread)
}
