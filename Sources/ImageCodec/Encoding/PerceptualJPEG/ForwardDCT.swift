import Foundation

/// The 8×8 forward DCT of JPEG (ITU-T T.81 A.3.3) in single precision, eight lanes at a time.
///
/// libjpeg-turbo's encoder computes it in 16-bit fixed point after rounding YCbCr to 8 bits; here
/// the samples stay floats from RGB to the quantizer, so the only rounding is the one that is
/// meant (quantization). F = M · f · Mᵀ, separable.
///
/// The column pass, with the block's rows as vectors, is the definition itself split by the
/// symmetry of its cosines (derived in the encoder's DocC article, "Encoding JPEG"): with
/// G(u) = Σₓ f(x) cos((2x + 1)uπ/16), the sums s(k) = f(k) + f(7 − k) carry the even outputs and
/// the differences d(k) = f(k) − f(7 − k) the odd ones, because cos((2(7 − k) + 1)uπ/16) is
/// (−1)ᵘ cos((2k + 1)uπ/16). The even half splits the same way once more (G(0) and G(4) from
/// s(0) ± s(3) and s(1) ± s(2), G(2) and G(6) from the two differences), and each odd output is
/// the four differences weighed by the four odd cosines in the order the definition gives:
/// 21 multiplications and 32 additions for eight points. G(u) is F(u) times 2/C(u) (2√2 for
/// u = 0, 2 otherwise); the quantizer divides that out with the step (one multiplication, as
/// before). The row pass multiplies each row by Mᵀ with broadcast scalars, which leaves the
/// result in natural order without a transpose.
///
/// The arithmetic runs in CImageKernels (`iec_fdct_quantize_row`, with the quantization; `iec_fdct`
/// alone for tests): a block row per 256-bit register where the CPU has AVX2, a portable twin
/// elsewhere, the same operations in the same order in both. This type holds the constants.
enum ForwardDCT {
    /// Rows 0..<8 of Mᵀ (row x is M[·][x]), M[u][x] = C(u)/2 · cos((2x + 1)uπ/16), C(0) = 1/√2:
    /// 64 floats, row x at 8x.
    static let transposedBasis: [Float] = (0..<64).map { index in
        let (x, u) = (index / 8, index % 8)
        let scale = u == 0 ? (0.5).squareRoot() / 2 : 0.5
        return Float(scale * cos(Double(2 * x + 1) * Double(u) * Double.pi / 16))
    }

    /// What the transform leaves in place of F(u, v): F(u, v) · outputScale(u), the column pass's
    /// unnormalised sum, 2/C(u).
    static func outputScale(u: Int) -> Float {
        u == 0 ? Float(2 * 2.0.squareRoot()) : 2
    }

    /// cos(nπ/16) for n = 0...7, in single precision.
    static let cosines: [Float] = (0..<8).map { Float(cos(Double($0) * Double.pi / 16)) }
}
