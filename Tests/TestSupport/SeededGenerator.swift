import Foundation

/// A reproducible random number generator (SplitMix64). The seed comes from `TEST_SEED` when
/// set, so a failure can be replayed, and is otherwise drawn at random; tests put `seed` in
/// their failure messages.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The seed this generator started from.
    public let seed: UInt64
    private var state: UInt64

    /// A generator from `seed`, or from `TEST_SEED`, or from a random seed.
    public init(seed: UInt64? = nil) {
        let chosen =
            seed ?? ProcessInfo.processInfo.environment["TEST_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        self.seed = chosen
        state = chosen
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// "seed N (rerun with TEST_SEED=N)", for failure messages.
    public var replay: String { "seed \(seed) (rerun with TEST_SEED=\(seed))" }
}
