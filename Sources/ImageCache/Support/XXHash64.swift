/// XXH64 (Yann Collet's xxHash, 64-bit): the per-entry checksum of the disk cache.
///
/// Not a cryptographic hash; it detects torn writes and bit rot, which is its job here, at
/// several GB/s, so verifying a 30 KB hit costs a few microseconds (SHA-256 would cost tens).
/// Checked against the reference implementation's test vectors in the tests.
enum XXHash64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2, v2 = seed &+ prime2, v3 = seed, v4 = seed &- prime1
            while offset + 32 <= count {
                v1 = round(v1, word(bytes, offset))
                v2 = round(v2, word(bytes, offset + 8))
                v3 = round(v3, word(bytes, offset + 16))
                v4 = round(v4, word(bytes, offset + 24))
                offset += 32
            }
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ prime5
        }
        hash &+= UInt64(count)
        while offset + 8 <= count {
            hash = rotate(hash ^ round(0, word(bytes, offset)), 27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            let half = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            hash = rotate(hash ^ (half &* prime1), 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            hash = rotate(hash ^ (UInt64(bytes[offset]) &* prime5), 11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
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
