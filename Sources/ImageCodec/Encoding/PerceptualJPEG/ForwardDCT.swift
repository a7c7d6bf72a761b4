import Foundation

/// The 8×8 forward DCT of JPEG (ITU-T T.81 A.3.3) in single precision, eight lanes at a time.
///
/// libjpeg-turbo's encoder computes it in 16-bit fixed point after rounding YCbCr to 8 bits; here
/// the samples stay floats from RGB to the quantizer, so the only rounding is the one that is
/// meant (quantization). F = M · f · Mᵀ, separable. The column pass, with the block's rows as
/// vectors, is Arai, Agui and Nakajima's factorisation (5 multiplications and 29 additions for
/// eight points, against 64 and 56 for the matrix), which leaves output u multiplied by a known
/// factor; the quantizer divides it out with the step (one multiplication, as before). The row
/// pass multiplies each row by Mᵀ with broadcast scalars, which leaves the result in natural
/// order without a transpose (a transpose costs more than it saves without byte shuffles).
enum ForwardDCT {
    /// Rows 0..<8 of Mᵀ (row x is M[·][x]), M[u][x] = C(u)/2 · cos((2x + 1)uπ/16), C(0) = 1/√2.
    static let transposedBasis: [SIMD8<Float>] = (0..<8).map { x in
        SIMD8<Float>(
            (0..<8).map { u in
                let scale = u == 0 ? (0.5).squareRoot() / 2 : 0.5
                return Float(scale * cos(Double(2 * x + 1) * Double(u) * Double.pi / 16))
            })
    }

    /// What `transform` leaves in place of F(u, v): F(u, v) · outputScale(u).
    static func outputScale(u: Int) -> Float {
        // The factorisation's output k is √2 · cos(kπ/16) (1 for k = 0) times 2√2 over JPEG's
        // C(k)/2 normalisation.
        Float(2 * 2.0.squareRoot() * (u == 0 ? 1 : 2.0.squareRoot() * cos(Double(u) * Double.pi / 16)))
    }

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

    /// The 1-D transform of each lane over the eight vectors.
    @inline(__always)
    private static func columns(_ d: UnsafeMutablePointer<SIMD8<Float>>) {
        // cos(π/4), cos(3π/8), cos(π/8) − cos(3π/8), cos(π/8) + cos(3π/8).
        let c4: Float = 0.707_106_781, c6: Float = 0.382_683_433
        let c2MinusC6: Float = 0.541_196_100, c2PlusC6: Float = 1.306_562_965
        let sum07 = d[0] + d[7], difference07 = d[0] - d[7]
        let sum16 = d[1] + d[6], difference16 = d[1] - d[6]
        let sum25 = d[2] + d[5], difference25 = d[2] - d[5]
        let sum34 = d[3] + d[4], difference34 = d[3] - d[4]
        // Even outputs from the sums.
        let outer = sum07 + sum34, outerDifference = sum07 - sum34
        let inner = sum16 + sum25, innerDifference = sum16 - sum25
        d[0] = outer + inner
        d[4] = outer - inner
        let rotated = (innerDifference + outerDifference) * c4
        d[2] = outerDifference + rotated
        d[6] = outerDifference - rotated
        // Odd outputs from the differences: a rotation shared by 1/7 and 3/5.
        let low = difference34 + difference25, middle = difference25 + difference16
        let high = difference16 + difference07
        let shared = (low - high) * c6
        let lowTerm = c2MinusC6 * low + shared, highTerm = c2PlusC6 * high + shared
        let middleTerm = middle * c4
        let plus = difference07 + middleTerm, minus = difference07 - middleTerm
        d[5] = minus + lowTerm
        d[3] = minus - lowTerm
        d[1] = plus + highTerm
        d[7] = plus - highTerm
    }
}
