import Testing
@testable import ImageCache
import TestSupport

@Suite("XXH64 checksum")
struct XXHash64Tests {
    /// Values from Fixtures/xxhash64-vectors.py (the reference implementation).
    static let vectors: [([UInt8], UInt64, UInt64)] = [
        ([], 0xEF46_DB37_51D8_E999, 0x9558_4AF7_701F_808D),
        (Array("a".utf8), 0xD24E_C4F1_A98C_6E5B, 0x747B_8605_23D6_9AB6),
        (Array("abc".utf8), 0x44BC_2CF5_AD77_0999, 0x0170_0E64_F6F2_3509),
        (Array("0123456789abcdef0123456789abcdef".utf8), 0x642A_9495_8E71_E6C5, 0x4EB2_93ED_828E_62D4),
        (Array((0..<3).flatMap { _ in (0...255).map { UInt8($0) } }) + Array("xyz".utf8), 0xE921_A1B4_5BD7_79F8, 0x6B1B_5D67_1FB9_3B43)
    ]

    @Test("matches the reference implementation", arguments: 0..<5)
    func referenceVectors(_ index: Int) {
        let (input, seed0, seed12345) = Self.vectors[index]
        input.withUnsafeBytes { bytes in
            #expect(XXHash64.hash(bytes) == seed0)
            #expect(XXHash64.hash(bytes, seed: 12345) == seed12345)
        }
    }
}

extension XXHash64Tests {
    @Test("in pieces, at every split of the vectors and of random inputs, the same hash as in one go")
    func streamingMatchesOneShot() {
        var generator = SeededGenerator(seed: 0x5EED_0064)
        let randomInputs = (0..<20).map { _ in
            (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        for input in Self.vectors.map(\.0) + randomInputs {
            input.withUnsafeBytes { bytes in
                let whole = XXHash64.hash(bytes, seed: 77)
                for first in stride(from: 0, through: bytes.count, by: max(1, bytes.count / 17)) {
                    for second in [first, (first + bytes.count) / 2, bytes.count] where second >= first {
                        var state = XXHash64.Streaming(seed: 77)
                        state.update(UnsafeRawBufferPointer(rebasing: bytes[0..<first]))
                        state.update(UnsafeRawBufferPointer(rebasing: bytes[first..<second]))
                        state.update(UnsafeRawBufferPointer(rebasing: bytes[second...]))
                        #expect(state.finalize() == whole, "\(bytes.count) bytes split at \(first), \(second) (seed 0x5EED0064)")
                    }
                }
            }
        }
    }
}
