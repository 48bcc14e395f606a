import PermissionLedger

extension Ledger.Options {
    /// These options, with every key, salt and nonce of the ledger derived from the seed of the fixtures'
    /// expected results instead of the system's secure generator: given the same events, a ledger opened with
    /// them stores the same bytes, and gives the same hashes and digests, as the testing kit's replays
    /// (``ReplayedLedger``), the tool's `replay`, and the `.expected` files of the fixture library.
    ///
    /// Whoever knows the seed can work out every secret of such a ledger, and the data keys that seal its
    /// personal fields: for tests only, never for real data.
    public func seededForTests() -> Ledger.Options {
        var options = self
        options.secrets = .seeded(SecretSource.testSeed)
        return options
    }
}
