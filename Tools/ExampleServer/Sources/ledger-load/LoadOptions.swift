import Foundation

/// The command line of `ledger-load`.
struct LoadOptions {
    var host = "127.0.0.1"
    var port = 8080
    var connections = 64
    var duration: Double = 10
    /// Where the id of every event that got a 2xx is appended, one a line.
    var acknowledgedPath: String?
    /// Where the id of every event is appended before its request is sent.
    var sentPath: String?

    static let usage = """
        usage: ledger-load [--host H] [--port P] [--connections N] [--duration SECONDS] \
        [--acknowledged FILE] [--sent FILE]

        POSTs one fresh question.asked per request to http://H:P/events over N keep-alive connections (64),
        each on its own thread, for SECONDS (10) or until the server goes away. Appends the event id of every
        request it sends to --sent before sending it, and of every request answered 2xx to --acknowledged,
        a line at a time. Prints requests/s and p50/p99 latency at the end.
        """

    /// Parses the arguments; prints the usage and exits 2 on a mistake.
    static func parse(_ arguments: [String]) -> LoadOptions {
        var options = LoadOptions()
        var iterator = arguments.makeIterator()
        func value(_ name: String) -> String {
            guard let value = iterator.next() else { fail("\(name) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--host": options.host = value(argument)
            case "--port": options.port = number(value(argument), argument)
            case "--connections": options.connections = max(1, number(value(argument), argument))
            case "--duration":
                guard let seconds = Double(value(argument)), seconds > 0 else { fail("--duration: expected a number of seconds") }
                options.duration = seconds
            case "--acknowledged": options.acknowledgedPath = value(argument)
            case "--sent": options.sentPath = value(argument)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
        return options
    }

    private static func number(_ text: String, _ name: String) -> Int {
        guard let number = Int(text) else { fail("\(name): expected a whole number, got \(text)") }
        return number
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("ledger-load: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
