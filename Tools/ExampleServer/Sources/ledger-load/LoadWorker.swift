import Foundation

/// One connection of the load, on a thread of its own: POSTs one fresh event per request until the deadline
/// or until the server goes away (a connection is refused).
final class LoadWorker: @unchecked Sendable {
    let index: Int
    let options: LoadOptions
    let deadline: Double
    let sentLog: IDLog?
    let acknowledgedLog: IDLog?

    /// The latency of every answered request, in seconds.
    private(set) var latencies: [Double] = []
    /// Answered requests by status.
    private(set) var statuses: [Int: Int] = [:]
    /// Requests sent without a whole response (the connection ended or failed).
    private(set) var failures = 0
    /// Whether a connection was refused: the server stopped listening.
    private(set) var sawServerGo = false

    init(index: Int, options: LoadOptions, deadline: Double, sentLog: IDLog?, acknowledgedLog: IDLog?) {
        self.index = index
        self.options = options
        self.deadline = deadline
        self.sentLog = sentLog
        self.acknowledgedLog = acknowledgedLog
    }

    func run() {
        var connection: HTTPConnection?
        var number = index
        var failedConnects = 0
        while monotonicSeconds() < deadline {
            if connection == nil {
                do {
                    connection = try HTTPConnection(host: options.host, port: options.port)
                    failedConnects = 0
                } catch .refused {
                    sawServerGo = true
                    return
                } catch {
                    failedConnects += 1
                    if failedConnects > 50 { return }
                    usleep(10_000)
                    continue
                }
            }
            let event = QuestionAskedEvent(number: number, occurredAt: QuestionAskedEvent.now())
            number += options.connections
            // Recorded before it is sent: every id in the ledger must be in this file.
            sentLog?.append(event.id)
            let began = monotonicSeconds()
            do {
                let response = try connection!.post("/events", body: Array((event.line + "\n").utf8), contentType: "application/x-ndjson")
                latencies.append(monotonicSeconds() - began)
                statuses[response.status, default: 0] += 1
                if (200..<300).contains(response.status) { acknowledgedLog?.append(event.id) }
                if response.closesConnection { connection = nil }
            } catch {
                // Not acknowledged: the event may or may not have been appended. Reconnect; a refusal then
                // means the server went away.
                failures += 1
                connection = nil
            }
        }
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
