/// XXH64 (Yann Collet's xxHash, 64-bit, as its specification describes it): the per-entry
/// checksum of the disk cache.
///
/// Not a cryptographic hash; it detects torn writes and bit rot, which is its job here, at
/// several GB/s, so verifying a 30 KB hit costs a few microseconds (SHA-256 would cost tens).
/// Checked against the reference implementation's test vectors in the tests.
///
/// The bytes may arrive in pieces (``Streaming``): an entry's header and its data are hashed
/// where they lie, never copied into one buffer for it.
enum XXHash64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        var state = Streaming(seed: seed)
        state.update(bytes)
        return state.finalize()
    }

    /// XXH64 over bytes given piece by piece: the same value as ``hash(_:seed:)`` over the
    /// pieces joined.
    struct Streaming {
        private let seed: UInt64
        private var lanes: (UInt64, UInt64, UInt64, UInt64)
        /// The start of a stripe that has not arrived whole yet (fewer than 32 bytes).
        private var pending: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var pendingCount = 0
        private var total = 0

        init(seed: UInt64 = 0) {
            self.seed = seed
            lanes = (seed &+ prime1 &+ prime2, seed &+ prime2, seed, seed &- prime1)
        }

        /// Adds `bytes` after everything given so far.
        mutating func update(_ bytes: UnsafeRawBufferPointer) {
            total += bytes.count
            var offset = 0
            if pendingCount > 0 {
                let taken = min(32 - pendingCount, bytes.count)
                withUnsafeMutableBytes(of: &pending) { stripe in
                    for index in 0..<taken { stripe[pendingCount + index] = bytes[index] }
                }
                pendingCount += taken
                offset = taken
                guard pendingCount == 32 else { return }
                withUnsafeBytes(of: pending) { consume(stripe: $0, at: 0) }
                pendingCount = 0
            }
            while offset + 32 <= bytes.count {
                consume(stripe: bytes, at: offset)
                offset += 32
            }
            let left = bytes.count - offset
            withUnsafeMutableBytes(of: &pending) { stripe in
                for index in 0..<left { stripe[index] = bytes[offset + index] }
            }
            pendingCount = left
        }

        /// The hash of everything given.
        func finalize() -> UInt64 {
            var hash: UInt64
            if total >= 32 {
                let (v1, v2, v3, v4) = lanes
                hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
                hash = merge(hash, v1)
                hash = merge(hash, v2)
                hash = merge(hash, v3)
                hash = merge(hash, v4)
            } else {
                hash = seed &+ prime5
            }
            hash &+= UInt64(total)
            return withUnsafeBytes(of: pending) { tail in
                let count = pendingCount
                var offset = 0
                while offset + 8 <= count {
                    hash = rotate(hash ^ round(0, word(tail, offset)), 27) &* prime1 &+ prime4
                    offset += 8
                }
                if offset + 4 <= count {
                    let half = UInt64(tail.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
                    hash = rotate(hash ^ (half &* prime1), 23) &* prime2 &+ prime3
                    offset += 4
                }
                while offset < count {
                    hash = rotate(hash ^ (UInt64(tail[offset]) &* prime5), 11) &* prime1
                    offset += 1
                }
                hash ^= hash >> 33
                hash &*= prime2
                hash ^= hash >> 29
                hash &*= prime3
                hash ^= hash >> 32
                return hash
            }
        }

        @inline(__always)
        private mutating func consume(stripe bytes: UnsafeRawBufferPointer, at offset: Int) {
            lanes.0 = round(lanes.0, word(bytes, offset))
            lanes.1 = round(lanes.1, word(bytes, offset + 8))
            lanes.2 = round(lanes.2, word(bytes, offset + 16))
            lanes.3 = round(lanes.3, word(bytes, offset + 24))
        }
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ hash: UInt64, _ lane: UInt64) -> UInt64 {
        (hash ^ round(0, lane)) &* prime1 &+ prime4
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }
}
