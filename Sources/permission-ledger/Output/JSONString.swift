import PermissionLedger

/// A string as a JSON string literal, escaped by the engine's writer as all of the ledger's JSON is
/// (docs/spec/CLI.md, "Common"). The commands' output shapes are built with `JSONObjectWriter`.
func jsonString(_ s: String) -> String { JSONObjectWriter.string(s) }
