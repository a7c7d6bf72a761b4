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
/// result in natural order without a transpose (a transpose costs more than it saves without
/// byte shuffles).
enum ForwardDCT {
    /// Rows 0..<8 of Mᵀ (row x is M[·][x]), M[u][x] = C(u)/2 · cos((2x + 1)uπ/16), C(0) = 1/√2.
    static let transposedBasis: [SIMD8<Float>] = (0..<8).map { x in
        SIMD8<Float>(
            (0..<8).map { u in
                let scale = u == 0 ? (0.5).squareRoot() / 2 : 0.5
                return Float(scale * cos(Double(2 * x + 1) * Double(u) * Double.pi / 16))
            })
    }

    /// What `transform` leaves in place of F(u, v): F(u, v) · outputScale(u), the column pass's
    /// unnormalised sum, 2/C(u).
    static func outputScale(u: Int) -> Float {
        u == 0 ? Float(2 * 2.0.squareRoot()) : 2
    }

    /// cos(nπ/16) for n = 0...7, in single precision.
    private static let cosines: [Float] = (0..<8).map { Float(cos(Double($0) * Double.pi / 16)) }

    /// Transforms, in place, the block whose row y is `block[y]` (level-shifted samples):
    /// afterwards `block[u]` lane v is F(u, v) · outputScale(u), u the vertical frequency.
    @inline(__always)
    static func transform(_ block: UnsafeMutablePointer<SIMD8<Float>>, transposedBasis: UnsafePointer<SIMD8<Float>>) {
        columns(block)
        for u in 0..<8 {
            let row = block[u]
            var sum = row[0] * transposedBasis[0]
            for x in 1..<8 { sum += row[x] * transposedBasis[x] }
            block[u] = sum
        }
    }

    /// G(u) of each lane over the eight vectors (see the type's comment for the derivation).
    @inline(__always)
    private static func columns(_ f: UnsafeMutablePointer<SIMD8<Float>>) {
        let c = cosines
        let (c1, c2, c3, c4, c5, c6, c7) = (c[1], c[2], c[3], c[4], c[5], c[6], c[7])
        // The mirror symmetry x ↔ 7 − x.
        let s0 = f[0] + f[7], s1 = f[1] + f[6], s2 = f[2] + f[5], s3 = f[3] + f[4]
        let d0 = f[0] - f[7], d1 = f[1] - f[6], d2 = f[2] - f[5], d3 = f[3] - f[4]
        // Even outputs: the sums' own symmetry k ↔ 3 − k.
        let e0 = s0 + s3, e1 = s1 + s2
        let o0 = s0 - s3, o1 = s1 - s2
        f[0] = e0 + e1
        f[4] = (e0 - e1) * c4
        f[2] = o0 * c2 + o1 * c6
        f[6] = o0 * c6 - o1 * c2
        // Odd outputs: cos((2k + 1)uπ/16) for u = 1, 3, 5, 7 and k = 0...3, folded into 0...7.
        f[1] = d0 * c1 + d1 * c3 + d2 * c5 + d3 * c7
        f[3] = d0 * c3 - d1 * c7 - d2 * c1 - d3 * c5
        f[5] = d0 * c5 - d1 * c1 + d2 * c7 + d3 * c3
        f[7] = d0 * c7 - d1 * c5 + d2 * c3 - d3 * c1
    }
}
