import Crypto

func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

/// The chain hash after an event: SHA-256 over the previous hash followed by the event's stored bytes.
@_spi(StorageEngine) public func chainHash(previous: ChainHash, record: [UInt8]) -> ChainHash {
    var hasher = SHA256()
    hasher.update(data: previous.bytes)
    hasher.update(data: record)
    return ChainHash(unchecked: Array(hasher.finalize()))
}
