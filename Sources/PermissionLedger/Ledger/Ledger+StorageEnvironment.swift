public import LMDB

extension Ledger {
    /// The LMDB environment that holds this ledger, for what measures the ledger against LMDB itself (the
    /// benchmark's floors: ``OperationTrace``). Reading through it bypasses every check of the ledger's; writing
    /// through it damages the ledger.
    @_spi(StorageEngine) public var storageEnvironment: Environment { environment }
}
