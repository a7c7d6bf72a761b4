/// Eight packed RGB8 pixels as three vectors, one per channel, for the encoder's masking field
/// (its colour conversion is `iec_rgb_to_ycbcr` in CImageKernels).
///
/// The package is built for the baseline x86-64 (SSE2: no byte shuffle) as well as ARM, so the
/// pixels are not deinterleaved with shuffles: pixel i's bytes are read as one little-endian
/// 32-bit word at 3i (red in the low byte), and masks and shifts split the eight words. Reading a
/// word reads one byte past the pixel, so the caller keeps at least one more byte after the
/// eighth pixel (`x + 8 < width` on a row of `width` pixels; the last group goes pixel by pixel).
enum RGBPixels {
    /// The channels of the eight pixels at `start` as integers 0...255.
    @inline(__always)
    static func integers(_ start: UnsafePointer<UInt8>) -> (red: SIMD8<Int32>, green: SIMD8<Int32>, blue: SIMD8<Int32>) {
        let raw = UnsafeRawPointer(start)
        @inline(__always) func word(_ index: Int) -> UInt32 {
            UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 3 * index, as: UInt32.self))
        }
        let words = SIMD8<UInt32>(word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7))
        return (
            SIMD8<Int32>(truncatingIfNeeded: words & 0xFF), SIMD8<Int32>(truncatingIfNeeded: (words &>> 8) & 0xFF),
            SIMD8<Int32>(truncatingIfNeeded: (words &>> 16) & 0xFF)
        )
    }
}
