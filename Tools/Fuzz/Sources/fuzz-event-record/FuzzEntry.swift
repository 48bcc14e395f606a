import FuzzProperties

/// One input: the bytes of one stored record given to `EventRecord.decode`, checked by ``EventRecordProperty``.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    EventRecordProperty.check(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// `fuzz-event-record --write-seeds DIR FILE.jsonl...` writes the stored record of every event of the files.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    SeedCorpus.writeIfAsked(.records, arguments: fuzzerArguments(argc, argv))
    return 0
}
