import Testing
@testable import permission_ledger

/// The tool's CSV: RFC 4180, every value displayed (docs/spec/CLI.md, "Common"), formulas defused.
@Suite("CSV tables")
struct TableTests {
    @Test("a field with a comma or a quote is quoted, its quotes doubled; CR and LF are shown as escapes; others are written as they are",
          arguments: [
              ("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
              ("a\nb", "a\\u{000A}b"), ("a\rb", "a\\u{000D}b"), ("a\r\nb", "a\\u{000D}\\u{000A}b"), ("café", "café"),
          ])
    func quoting(_ text: String, _ written: String) {
        var table = Table("field")
        table.add(text)
        #expect(table.csv() == "field\r\n" + written + "\r\n")
    }

    @Test("a field a spreadsheet would take for a formula gets a ' before it; a plain number does not",
          arguments: [
              ("=HYPERLINK(\"http://evil/\",\"x\")", "\"'=HYPERLINK(\"\"http://evil/\"\",\"\"x\"\")\""),
              ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
              ("\tx", "\\u{0009}x"), ("+15550100101", "+15550100101"), ("-12", "-12"), ("-1.5", "-1.5"), ("=5", "'=5"),
              ("a=b", "a=b"),
          ])
    func formulas(_ text: String, _ written: String) {
        var table = Table("field")
        table.add(text)
        #expect(table.csv() == "field\r\n" + written + "\r\n")
    }
}
