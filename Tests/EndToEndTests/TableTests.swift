import Testing
@testable import permission_ledger

/// The tool's CSV: RFC 4180, whatever the text in a field.
@Suite("CSV tables")
struct TableTests {
    @Test("a field with a comma, a quote, CR, LF or CRLF is quoted, its quotes doubled; others are written as they are",
          arguments: [
              ("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
              ("a\nb", "\"a\nb\""), ("a\rb", "\"a\rb\""), ("a\r\nb", "\"a\r\nb\""), ("café", "café"),
          ])
    func quoting(_ text: String, _ written: String) {
        var table = Table("field")
        table.add(text)
        #expect(table.csv() == "field\r\n" + written + "\r\n")
    }
}
