import Foundation

/// SHA-256 as FIPS 180-4 defines it (§4.1.2 functions, §5 padding and parsing, §6.2.2 the
/// hash computation), for the disk cache's file names and the URL signatures: what needs a
/// collision-resistant hash without bringing a TLS stack (swift-crypto's BoringSSL on Linux)
/// into a client app.
///
/// The constants are not a table copied from anywhere: §4.2.2 defines them as the first 32
/// bits of the fractional parts of the cube roots of the first 64 primes, and §5.3.3 the
/// initial hash as those of the square roots of the first 8; both are computed here from that
/// definition and checked against the standard's examples by the tests.
package struct SHA256: Sendable {
    /// Bytes in a digest.
    package static let digestBytes = 32
    /// Bytes in a message block.
    package static let blockBytes = 64

    private var state: [UInt32] = Self.initialHash
    /// The message's tail that does not fill a block yet (under 64 bytes).
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    /// A hash of nothing yet.
    package init() {
        pending.reserveCapacity(Self.blockBytes) // small: one block
    }

    /// The digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finalize()
    }

    /// Appends `bytes` to the message.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            pending.append(byte)
            if pending.count == Self.blockBytes {
                compress(pending)
                pending.removeAll(keepingCapacity: true)
            }
            length &+= 8
        }
    }

    /// The digest of everything appended (§5.1.1: a 1 bit, zeros to 56 bytes mod 64, the length
    /// in bits as a big-endian 64-bit number).
    package consuming func finalize() -> [UInt8] {
        let bits = length
        pending.append(0x80)
        if pending.count > 56 {
            pending += [UInt8](repeating: 0, count: Self.blockBytes - pending.count)
            compress(pending)
            pending.removeAll(keepingCapacity: true)
        }
        pending += [UInt8](repeating: 0, count: 56 - pending.count)
        pending += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * $0)) }
        compress(pending)
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    /// §6.2.2: one 512-bit block into the state.
    private mutating func compress(_ block: [UInt8]) {
        var schedule = [UInt32](repeating: 0, count: 64) // small: 256 bytes
        for t in 0..<16 {
            schedule[t] = block[4 * t..<4 * t + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        for t in 16..<64 {
            schedule[t] = Self.smallSigma1(schedule[t - 2]) &+ schedule[t - 7] &+ Self.smallSigma0(schedule[t - 15]) &+ schedule[t - 16]
        }
        var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        for t in 0..<64 {
            let t1 = h &+ Self.bigSigma1(e) &+ ((e & f) ^ (~e & g)) &+ Self.roundConstants[t] &+ schedule[t]
            let t2 = Self.bigSigma0(a) &+ ((a & b) ^ (a & c) ^ (b & c))
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        for (index, value) in [a, b, c, d, e, f, g, h].enumerated() { state[index] &+= value }
    }

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
    private static func bigSigma0(_ x: UInt32) -> UInt32 { rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22) }
    private static func bigSigma1(_ x: UInt32) -> UInt32 { rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25) }
    private static func smallSigma0(_ x: UInt32) -> UInt32 { rotr(x, 7) ^ rotr(x, 18) ^ x >> 3 }
    private static func smallSigma1(_ x: UInt32) -> UInt32 { rotr(x, 17) ^ rotr(x, 19) ^ x >> 10 }

    /// The first `count` primes.
    static func primes(_ count: Int) -> [Int] {
        var primes: [Int] = []
        var candidate = 2
        while primes.count < count {
            if primes.allSatisfy({ candidate % $0 != 0 }) { primes.append(candidate) }
            candidate += 1
        }
        return primes
    }

    /// The first 32 bits of the fractional part of `root` (a root of a prime below 312, so a
    /// double keeps 49 or more bits of its fraction: exact in the 32 taken).
    static func fractionBits(_ root: Double) -> UInt32 {
        UInt32((root - root.rounded(.down)) * 4_294_967_296)
    }

    /// §4.2.2: K₀ … K₆₃ from the cube roots of the first 64 primes.
    static let roundConstants: [UInt32] = primes(64).map { fractionBits(cbrt(Double($0))) }
    /// §5.3.3: H⁽⁰⁾ from the square roots of the first 8 primes.
    static let initialHash: [UInt32] = primes(8).map { fractionBits(Double($0).squareRoot()) }
}
