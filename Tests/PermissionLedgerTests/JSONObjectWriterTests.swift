import PermissionLedger
import Testing

/// The object writer the tool builds its commands' JSON with: members in the order written, strings escaped by
/// the ledger's one writer (docs/spec/CLI.md, "Common"), one line.
@Suite struct JSONObjectWriterTests {
    @Test("members in order, nulls, numbers, booleans and JSON already written")
    func members() {
        var json = JSONObjectWriter()
        json.bool("ok", false)
        json.integer("events", UInt64?.none)
        json.integer("damagedSeq", UInt64(57))
        json.json("asOf", #"{"seq":3}"#)
        json.string("head", nil)
        json.string("problem", "bad")
        #expect(json.text == #"{"ok":false,"events":null,"damagedSeq":57,"asOf":{"seq":3},"head":null,"problem":"bad"}"#)
        #expect(JSONObjectWriter().text == "{}")
    }

    @Test("strings are escaped as all of the ledger's JSON: quotes, backslashes, controls, U+2028 and U+2029")
    func escaping() {
        let text = "say \"hi\"\\\n\r\t\u{1}\u{2028}\u{2029}é"
        let escaped = #""say \"hi\"\\\n\r\t\u0001\u2028\u2029é""#
        #expect(JSONObjectWriter.string(text) == escaped)
        var json = JSONObjectWriter()
        json.string("problem", text)
        #expect(json.text == #"{"problem":"# + escaped + "}")
    }
}
