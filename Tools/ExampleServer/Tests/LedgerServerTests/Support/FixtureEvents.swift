import PermissionLedger

extension Fixtures {
    /// The events of fixture `name`, decoded as the server decodes a body.
    static func events(_ name: String) throws -> [PermissionEvent] {
        try text(name).split(separator: "\n").compactMap { line in try EventJSON.decode(line: String(line)) }
    }
}

extension Ledger {
    /// Every stored event's JSON line, as `export` writes it (without the newline), in log order.
    func exportedLines() throws -> [String] {
        try read { view in
            var lines: [String] = []
            try view.forEachEvent(after: 0, through: view.head.seq) { lines.append(EventJSON.encode($0)) }
            return lines
        }
    }
}
