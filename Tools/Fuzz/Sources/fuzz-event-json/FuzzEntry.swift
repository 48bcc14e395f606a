import FuzzProperties

/// One input: one line given to `EventJSON.decode(line:)`, checked by ``EventJSONProperty``.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    EventJSONProperty.check(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// `fuzz-event-json --write-seeds DIR FILE.jsonl...` writes every non-blank line as a seed.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    SeedCorpus.writeIfAsked(.lines, arguments: fuzzerArguments(argc, argv))
    return 0
}
