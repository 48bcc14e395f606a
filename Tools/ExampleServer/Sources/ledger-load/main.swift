import Foundation

// ledger-load: a small load client of ledger-server's POST /events, with no HTTP library: HTTP/1.1 over
// POSIX sockets, one keep-alive connection per thread. See LoadOptions.usage.

signal(SIGPIPE, SIG_IGN)
let options = LoadOptions.parse(Array(CommandLine.arguments.dropFirst()))
let sentLog = options.sentPath.map { IDLog(path: $0) }
let acknowledgedLog = options.acknowledgedPath.map { IDLog(path: $0) }
let start = monotonicSeconds()
let workers = (0..<options.connections).map {
    LoadWorker(index: $0, options: options, deadline: start + options.duration, sentLog: sentLog, acknowledgedLog: acknowledgedLog)
}
let finished = DispatchGroup()
for worker in workers {
    finished.enter()
    let thread = Thread {
        worker.run()
        finished.leave()
    }
    thread.stackSize = 1 << 20
    thread.start()
}
finished.wait()
print(LoadReport(workers: workers, seconds: monotonicSeconds() - start).text)
