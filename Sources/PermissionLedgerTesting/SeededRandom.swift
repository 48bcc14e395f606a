/// A small, fast, seeded random number generator (SplitMix64): the same seed always gives the same
/// numbers, on every platform and in every run, so that generated scenarios and workloads repeat.
///
/// ```swift
/// var random = SeededRandom(seed: 42)
/// let subject = "kid-\(Int.random(in: 0..<100, using: &random))"
/// ```
///
/// Not for anything secret: it is predictable by design.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose numbers are fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
