/// How the example server listens and what it accepts.
public struct LedgerServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String
    /// The port to listen on; 0 asks the system for a free one (``LedgerServer/onServerRunning`` gets it).
    public var port: Int
    /// The largest `POST /events` body accepted, in bytes; a larger one is answered 413.
    public var maxBodyBytes: Int
    /// How often an event stream looks for events appended by other processes; events appended through this
    /// server (this process) are sent at once.
    public var streamPollInterval: Duration

    /// Listens on 127.0.0.1:8080 and accepts bodies of up to 16 MiB.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, maxBodyBytes: Int = 16 << 20,
        streamPollInterval: Duration = .seconds(1)
    ) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.streamPollInterval = streamPollInterval
    }
}
