import PermissionLedger

/// The body of a successful `POST /events`: `{"appended":N,"duplicates":N,"head":{"seq":N,"hash":HEX}}`.
struct AppendResult {
    /// Events appended by this request.
    var appended: Int
    /// Events already in the ledger with the same content: accepted, nothing appended.
    var duplicates: Int
    /// The log's head once the events were durable: its `seq` and chain hash.
    var head: LogHead

    init(_ summary: Ledger.AppendSummary) {
        appended = summary.appended
        duplicates = summary.duplicates
        head = summary.head
    }

    /// The JSON text, written directly: every value is a number or hex digits, and this is the answer to
    /// every append, where a general encoder would cost more than the rest of the response.
    var json: String {
        #"{"appended":\#(appended),"duplicates":\#(duplicates),"head":{"seq":\#(head.seq),"hash":"\#(head.hash.description)"}}"#
    }
}
