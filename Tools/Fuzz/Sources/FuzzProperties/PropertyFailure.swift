/// Stops the run on a broken property. The trap is what libFuzzer counts as a crash: it saves the input
/// (`crash-…` under the artifact prefix) and prints the message and the stack.
func propertyBroken(_ property: String, _ details: [(String, String)]) -> Never {
    var message = "property broken: \(property)"
    for (name, value) in details { message += "\n  \(name): \(value)" }
    fatalError(message)
}

/// Bytes as text for a failure message: the text when it is UTF-8, else hex.
func shown(_ bytes: some Collection<UInt8>) -> String {
    if let text = String(validating: bytes, as: UTF8.self) { return text.debugDescription }
    return bytes.map { byte in
        let hex = String(byte, radix: 16)
        return byte < 16 ? "0" + hex : hex
    }.joined()
}
