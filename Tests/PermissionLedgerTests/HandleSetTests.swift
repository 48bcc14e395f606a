import Foundation
import LMDB
@_spi(StorageEngine) @testable import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// A subject's handle set as of any point: the `handleSets` records (each event's changes, and now and then
/// the whole set) against a model of the set kept in the test, on sets far larger than the least number of
/// changes between whole sets.
@Suite struct HandleSetTests {
    static func row(_ value: String, known: Bool = true, seq: UInt64 = 1) -> HandleRow {
        HandleRow(handle: try! CommunicationHandle(value: value, kind: .custom), known: known,
                  since: Timestamp(microseconds: Int64(seq) * 1_000_000), until: nil, source: .observation(seq))
    }

    @Test("a record reads back as written; rows out of order, an unknown kind or trailing bytes are refused")
    func recordsRoundTripAndRefuseDamage() throws {
        let question = UUID(uuidString: "6A3F1C2E-AB00-4000-8000-000000000001")!
        let long = String(repeating: "x", count: 230)
        let rows = [
            Self.row("a"), Self.row("ab", known: false), Self.row("abc", seq: 9), Self.row("abé"), Self.row("abê", seq: 2),
            Self.row(long), Self.row(long + "y"),
            HandleRow(handle: try CommunicationHandle(value: "kid@example.com", kind: .emailAddress), known: true,
                      since: Timestamp(microseconds: -5_000_000), until: Timestamp(microseconds: 3_600_000_000), source: .question(question)),
            HandleRow(handle: try CommunicationHandle(value: "+15550100001", kind: .phoneNumber), known: true,
                      since: Timestamp(microseconds: .max), until: Timestamp(microseconds: .min), source: .observation(.max)),
            HandleRow(handle: try CommunicationHandle(value: "+15550100002", kind: .phoneNumber), known: false,
                      since: Timestamp(microseconds: .min), until: nil, source: .observation(0)),
        ]
        for record in [HandleSetRecord.whole(rows), .changes(rows), .whole([])] {
            let bytes = record.encoded()
            let decoded = try bytes.withUnsafeBytes { try HandleSetRecord(decoding: $0) }
            #expect(decoded.rows == record.rows && decoded.isWhole == record.isWhole)
            let header = try bytes.withUnsafeBytes { try HandleSetRecord.header($0) }
            #expect(header.isWhole == record.isWhole && header.count == record.rows.count)
        }
        // Neighbours share their value's start, time and source: a row of "ab" after "a" costs a few bytes.
        let plain = rows.prefix(2).map { $0.encoded().count }.reduce(0, +)
        #expect(HandleSetRecord.whole(Array(rows.prefix(2))).encoded().count < plain)

        let unordered = HandleSetRecord.changes([Self.row("b"), Self.row("a")]).encoded()
        let repeated = HandleSetRecord.changes([Self.row("a"), Self.row("a", known: false)]).encoded()
        var unknownKind = HandleSetRecord.whole(rows).encoded()
        unknownKind[0] = 3
        var badFlags = HandleSetRecord.whole([Self.row("a")]).encoded()
        badFlags[2] |= 0x40
        var overShared = HandleSetRecord.whole([Self.row("a"), Self.row("ab")]).encoded()
        // The second row's shared count: after its flags and kind code, it says 1 ("a"); make it 2.
        let second = overShared.count - 5
        #expect(overShared[second] == 1)
        overShared[second] = 2
        let trailing = HandleSetRecord.whole(rows).encoded() + [0]
        let cut = Array(HandleSetRecord.whole(rows).encoded().dropLast())
        for bytes in [unordered, repeated, unknownKind, badFlags, overShared, trailing, cut] {
            #expect(throws: EventRecord.DecodingError.self) { try bytes.withUnsafeBytes { try HandleSetRecord(decoding: $0) } }
        }
    }

    @Test("changes in log order reduce to each handle's last, ordered by handle, and replace the set's rows")
    func changesMergeIntoTheSet() {
        let changes = [Self.row("c", seq: 1), Self.row("a", seq: 2), Self.row("c", known: false, seq: 3), Self.row("b", seq: 4),
                       Self.row("a", known: false, seq: 5)]
        let latest = HandleSets.latestOfEachHandle(changes)
        #expect(latest == [Self.row("a", known: false, seq: 5), Self.row("b", seq: 4), Self.row("c", known: false, seq: 3)])
        let set = [Self.row("0"), Self.row("b", known: false), Self.row("d")]
        #expect(HandleSets.merging(set, sortedChanges: latest) == [
            Self.row("0"), Self.row("a", known: false, seq: 5), Self.row("b", seq: 4), Self.row("c", known: false, seq: 3), Self.row("d"),
        ])
        #expect(HandleSets.merging([], sortedChanges: latest) == latest)
        #expect(HandleSets.merging(set, sortedChanges: []) == set)
    }

    @Test("change records in log order keep each handle's row of the latest record that holds it")
    func changeRecordsMergeToTheLatestRows() {
        var random = SeededRandom(seed: 5)
        let values = (0..<12).map { "h\($0)" }
        for round in 0..<300 {
            let records = (0..<Int.random(in: 0...9, using: &random)).map { n in
                values.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }.sorted().map { Self.row($0, seq: UInt64(n + 1)) }
            }
            var latest: [String: HandleRow] = [:]
            for record in records { for row in record { latest[row.handle.value] = row } }
            let expected = latest.keys.sorted().map { latest[$0]! }
            #expect(HandleSets.merging([], changeRecords: records) == expected, "round \(round)")
        }
    }

    @Test("packed rows read, merge and order as handle rows do, and refuse the same damage")
    func packedRowsAgreeWithHandleRows() throws {
        var random = SeededRandom(seed: 11)
        let kinds: [CommunicationHandle.Kind] = [.phoneNumber, .emailAddress, .custom]
        let values = ["a", "ab", "abc", "abé", "abê", "b", "é", "z", "zz", "+15550100001", "+15550100002", "kid@example.com"]
        func rows(_ count: Int, seq: UInt64) -> [HandleRow] {
            let picked = (0..<count).map { _ in (kinds.randomElement(using: &random)!, values.randomElement(using: &random)!) }
            let handles = Set(picked.map { CommunicationHandle(normalizedValue: $0.1, kind: $0.0) }).sorted()
            return handles.map { handle in
                HandleRow(handle: handle, known: Bool.random(using: &random), since: Timestamp(microseconds: Int64(seq) * 1_000),
                          until: Bool.random(using: &random) ? Timestamp(microseconds: Int64(seq) * 2_000) : nil,
                          source: Bool.random(using: &random) ? .observation(seq) : .question(UUID()))
            }
        }
        for round in 0..<200 {
            let whole = rows(Int.random(in: 0...20, using: &random), seq: 1)
            let changes = (0..<Int.random(in: 0...5, using: &random)).map { rows(Int.random(in: 1...8, using: &random), seq: UInt64($0 + 2)) }
            var set = PackedHandleSet()
            let packedWhole = try HandleSetRecord.whole(whole).encoded().withUnsafeBytes { try set.read($0) }
            let packedChanges = try changes.map { change in try HandleSetRecord.changes(change).encoded().withUnsafeBytes { try set.read($0) } }
            let merged = set.values.withUnsafeBytes { values in
                HandleSets.merging(packedWhole, changeRecords: packedChanges) { PackedHandleSet.order($0, $1, values: values) }
            }
            let unpacked = merged.map { row in
                HandleRow(handle: set.withValue(of: row) { CommunicationHandle(normalizedValue: String(decoding: $0, as: UTF8.self), kind: row.kind) },
                          known: row.known, since: row.since, until: row.until, source: row.source)
            }
            #expect(unpacked == HandleSets.merging(whole, changeRecords: changes), "round \(round)")
        }
        let unordered = HandleSetRecord.changes([Self.row("b"), Self.row("a")]).encoded()
        let repeated = HandleSetRecord.changes([Self.row("a"), Self.row("a", known: false)]).encoded()
        let kindsUnordered = HandleSetRecord.changes([
            HandleRow(handle: try .phoneNumber("+15550100001"), known: true, since: Timestamp(microseconds: 0), until: nil, source: .observation(1)),
            HandleRow(handle: try .custom("a"), known: true, since: Timestamp(microseconds: 0), until: nil, source: .observation(1)),
        ]).encoded()
        var notUTF8 = HandleSetRecord.whole([Self.row("a")]).encoded()
        notUTF8[notUTF8.count - 5] = 0xFF
        #expect(notUTF8[notUTF8.count - 6] == 1, "the value's length, then its one byte")
        for bytes in [unordered, repeated, kindsUnordered, notUTF8] {
            var set = PackedHandleSet()
            #expect(throws: EventRecord.DecodingError.self) { try bytes.withUnsafeBytes { try set.read($0) } }
            #expect(throws: EventRecord.DecodingError.self) { try bytes.withUnsafeBytes { try HandleSetRecord(decoding: $0) } }
        }
    }

    /// One subject's observations of 1 to 60 handles out of a pool of 400, each known or not: the set grows
    /// past 300 handles, so whole sets come further and further apart and hold hundreds of rows.
    static func observations(count: Int, seed: UInt64) -> [String] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { n in
            let checked = (0..<Int.random(in: 1...60, using: &random)).map { _ in ("friend-\(Int.random(in: 0..<400, using: &random))", "custom") }
            let unique = Dictionary(checked.map { ($0.0, $0) }, uniquingKeysWith: { a, _ in a }).values.sorted { $0.0 < $1.0 }
            let known = unique.filter { _ in Bool.random(using: &random) }
            let clock = String(format: "%02d:%02d:%02d", 8 + n / 3600, n / 60 % 60, n % 60)
            return JSONLine.observed("obs-\(n)", subject: "kid-ava", checked: Array(unique), known: known, at: clock, recorded: clock)
        }
    }

    @Test("known handles at every seq equal the set replayed in the test, with whole sets apart as the policy says")
    func knownHandlesAtEverySeqEqualTheModel() async throws {
        let lines = Self.observations(count: 160, seed: 4)
        try await withLedger(mapSize: 16 << 20) { ledger async throws in
            let input = try lines.map { try decodeEvent($0) }
            #expect(try await ledger.append(input).appended == input.count)
            var model: [String: Bool] = [:]
            for (n, event) in input.enumerated() {
                guard case .handlesObserved(let checked, let known) = event.payload else { Issue.record("not an observation"); return }
                for handle in checked { model[handle.value] = known.contains(handle) }
                let expected = model.filter(\.value).keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                let answer = try ledger.read(asOf: .seq(UInt64(n + 1))) { try $0.knownHandles(subject: "kid-ava") }
                #expect(answer.map(\.handle.value) == expected, "as of seq \(n + 1)")
            }
            #expect(model.count > 300)

            // The records: whole sets only once enough changes followed the last one, and the last whole set
            // then far more than the least number of changes apart from the one before.
            let records = try ledger.read { try Self.records($0) }
            var state = HandleSetState()
            var wholeSets: [Int] = []
            for record in records {
                state.changesSinceWholeSet += record.changed
                let whole = HandleSetRecord.recordsWholeSet(changesSinceWholeSet: state.changesSinceWholeSet, wholeSetCount: state.wholeSetCount)
                #expect(record.isWhole == whole)
                if whole {
                    state = HandleSetState(changesSinceWholeSet: 0, wholeSetCount: record.count)
                    wholeSets.append(record.count)
                }
            }
            #expect(wholeSets.count >= 3 && wholeSets.last! > 200, "whole sets of \(wholeSets)")
            #expect(try await ledger.verify().isIntact)
        }
    }

    /// Each `handleSets` record of kid-ava in seq order: whether it holds the whole set, its rows, and how many
    /// handles its event changed (the event's distinct checked handles).
    static func records(_ view: LedgerView) throws -> [(isWhole: Bool, count: Int, changed: Int)] {
        var result: [(Bool, Int, Int)] = []
        let cursor = try view.txn.cursor(view.tables.handleSets)
        var entry = try cursor.first()
        while let e = entry {
            let header = try HandleSetRecord.header(e.value)
            let event = try #require(try view.txn.event(view.tables, seq: Keys.decodeSeq(e.key)))
            guard case .handlesObserved(let checked, _) = event.payload else { throw EventRecord.DecodingError(reason: "not an observation") }
            result.append((header.isWhole, header.count, Set(checked).count))
            entry = try cursor.next()
        }
        return result
    }

    @Test("appends one event at a time, each from a ledger opened afresh, write the very tables of one append")
    func writesFromAColdCacheEqualOneAppend() async throws {
        let input = try Self.observations(count: 120, seed: 5).map { try decodeEvent($0) }
        try await withTemporaryDirectory { directory async throws in
            let whole = directory + "/whole", piecewise = directory + "/piecewise"
            try await Ledger(path: whole, options: .seeded(mapSize: 16 << 20, durable: false)).append(input)
            for chunk in stride(from: 0, to: input.count, by: 7) {
                let ledger = try Ledger(path: piecewise, options: .seeded(mapSize: 16 << 20, durable: false))
                for event in input[chunk..<min(chunk + 7, input.count)] { _ = try await ledger.append([event]) }
            }
            #expect(try Ledger.tableDigests(path: piecewise).map(\.digest) == Ledger.tableDigests(path: whole).map(\.digest))
        }
    }
}
