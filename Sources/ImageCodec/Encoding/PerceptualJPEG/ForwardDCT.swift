import Foundation

/// The 8×8 forward DCT of JPEG (ITU-T T.81 A.3.3) in single precision, eight lanes at a time.
///
/// libjpeg-turbo's encoder computes it in 16-bit fixed point after rounding YCbCr to 8 bits; here
/// the samples stay floats from RGB to the quantizer, so the only rounding is the one that is
/// meant (quantization). Separable, F = M · f · Mᵀ: a column pass with the rows as vectors, then
/// a row pass that multiplies each row by Mᵀ with broadcast scalars, which leaves the result in
/// natural order without a transpose.
enum ForwardDCT {
    /// Row u is M[u][·], M[u][x] = C(u)/2 · cos((2x + 1)uπ/16), C(0) = 1/√2; rows 8...15 are
    /// Mᵀ's rows (row 8 + x is M[·][x]).
    static let basis: [SIMD8<Float>] = {
        func m(_ u: Int, _ x: Int) -> Float {
            let scale = u == 0 ? (0.5).squareRoot() / 2 : 0.5
            return Float(scale * cos(Double(2 * x + 1) * Double(u) * Double.pi / 16))
        }
        let rows = (0..<8).map { u in SIMD8<Float>((0..<8).map { m(u, $0) }) }
        let columns = (0..<8).map { x in SIMD8<Float>((0..<8).map { m($0, x) }) }
        return rows + columns
    }()

    /// Transforms, in place, the block whose row y is `block[y]` (level-shifted samples):
    /// afterwards `block[u]` lane v is F(u, v), u the vertical frequency (natural order, row by
    /// row). `scratch` holds 8 vectors between the passes.
    @inline(__always)
    static func transform(
        _ block: UnsafeMutablePointer<SIMD8<Float>>, scratch: UnsafeMutablePointer<SIMD8<Float>>,
        basis m: UnsafePointer<SIMD8<Float>>
    ) {
        // Column pass: g[u] = Σ_y M[u][y] · f[y] (lanes: x), into `scratch`.
        for u in 0..<8 {
            let weights = m[u]
            var sum = weights[0] * block[0]
            for y in 1..<8 { sum += weights[y] * block[y] }
            scratch[u] = sum
        }
        // Row pass: F[u] = Σ_x g[u][x] · Mᵀ[x] (lanes: v), back into `block`.
        let transposed = m + 8
        for u in 0..<8 {
            let row = scratch[u]
            var sum = row[0] * transposed[0]
            for x in 1..<8 { sum += row[x] * transposed[x] }
            block[u] = sum
        }
    }
}
