import CImageCodecShim

/// Inverse DCTs for the DCT scales 2/8 and 4/8 that low-pass filter as libjpeg-turbo's other
/// reduced scales do, instead of averaging.
///
/// libjpeg-turbo makes an 8×8 block's 4×4 and 2×2 outputs in `jidctred.c`: the full 8-point
/// IDCT with each run of 2 (or 4) outputs averaged, a box filter, which aliases. Its 3/8, 5/8,
/// 6/8 and 7/8 (`jidctint.c`) instead apply an N-point IDCT to the block's N×N lowest
/// coefficients: the block's band-limited signal sampled at N points, a proper low-pass. The
/// box at 4/8 needed 2× left to Lanczos where the others need 1.75× (see `TargetSize`), which
/// sent many 12 MP photos from the SIMD 4/8 to the plain-C 5/8 (whose 4:2:0 chroma runs
/// libjpeg's 10×10 IDCT). These replace `jidctred.c` for every component libjpeg decodes at
/// 4×4 or 2×2 (at 1/8 the luma is the DC term either way): same inputs, same outputs, the
/// other filter.
///
/// For output sample x of N (N = 2, 4) and coefficient u, with C(0) = 1/√2 and C(u) = 1 otherwise:
/// s(x, y) = ¼ Σᵤ Σᵥ C(u) C(v) F(u, v) cos((2x+1)uπ/2N) cos((2y+1)vπ/2N) + 128, rounded and clamped
/// to 0...255 — the 8-point IDCT's formula evaluated at the centres of N wider pixels, using only
/// the frequencies N samples can carry (the DC term gives the block's mean, as the average does).
/// Single-precision float, separable: the vertical pass on the coefficient rows as vectors,
/// then the horizontal pass on their transpose. Called by libjpeg for every block, so no
/// allocation and no generic code: about as fast as libjpeg-turbo's SSE2 4×4.
enum ReducedScaleIDCT {
    /// The method for a component libjpeg decodes at `scaledSize`×`scaledSize` per block, or nil
    /// where libjpeg's own is kept.
    static func method(scaledSize: Int) -> iec_jpeg_idct_method? {
        switch scaledSize {
        case 4: fourPoint
        case 2: twoPoint
        default: nil
        }
    }

    // The 4-point basis, C(u) · cos((2x+1)uπ/8) / 2 (the ¼ split between the two passes), takes
    // three values: C(0)/2 = cos(π/4)/2 = c, cos(π/8)/2 = a, cos(3π/8)/2 = b. Output x of
    // coefficients X is then an even/odd butterfly: e0 = c(X0 + X2), e1 = c(X0 − X2),
    // o0 = a·X1 + b·X3, o1 = b·X1 − a·X3; x0 = e0 + o0, x1 = e1 + o1, x2 = e1 − o1, x3 = e0 − o0.
    private static let c: Float = 0.353553391 // 1/(2√2)
    private static let a: Float = 0.461939766 // cos(π/8)/2
    private static let b: Float = 0.191341716 // cos(3π/8)/2

    private static let fourPoint: iec_jpeg_idct_method = { _, component, coefficients, output, column in
        guard let component, let coefficients, let output else { return }
        let q = quantization(component)
        // Vertical pass on the rows of coefficients (vectors over u), then the same butterfly
        // on the transposed result (vectors over y), which gives the output's columns.
        let rows = butterfly(row(coefficients, q, 0), row(coefficients, q, 1), row(coefficients, q, 2), row(coefficients, q, 3))
        let columns = butterfly(transposed(rows))
        // Back to rows: the four columns as bytes, transposed as they are stored.
        let bytes = SIMD16<UInt8>(
            lowHalf: SIMD8(lowHalf: samples(columns.0), highHalf: samples(columns.1)),
            highHalf: SIMD8(lowHalf: samples(columns.2), highHalf: samples(columns.3)))
        let column = Int(column)
        for y in 0..<4 {
            guard let row = output[y] else { continue }
            for x in 0..<4 { row[column + x] = bytes[4 * x + y] }
        }
    }

    private typealias Block = (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)

    /// The 4-point IDCT applied lane by lane across four vectors (coefficients 0...3).
    @inline(__always)
    private static func butterfly(_ x0: SIMD4<Float>, _ x1: SIMD4<Float>, _ x2: SIMD4<Float>, _ x3: SIMD4<Float>) -> Block {
        let (e0, e1): (SIMD4<Float>, SIMD4<Float>) = (c * (x0 + x2), c * (x0 - x2))
        let o0: SIMD4<Float> = a * x1 + b * x3
        let o1: SIMD4<Float> = b * x1 - a * x3
        return (e0 + o0, e1 + o1, e1 - o1, e0 - o0)
    }

    @inline(__always)
    private static func butterfly(_ block: Block) -> Block { butterfly(block.0, block.1, block.2, block.3) }

    @inline(__always)
    private static func transposed(_ m: Block) -> Block {
        (
            SIMD4(m.0[0], m.1[0], m.2[0], m.3[0]), SIMD4(m.0[1], m.1[1], m.2[1], m.3[1]),
            SIMD4(m.0[2], m.1[2], m.2[2], m.3[2]), SIMD4(m.0[3], m.1[3], m.2[3], m.3[3])
        )
    }

    /// Coefficients u = 0..<4 of row v, dequantized (all zero without a table, as libjpeg's own
    /// dequantization table is then; never installed so). Both IDCTs read their rows here.
    @inline(__always)
    private static func row(_ coefficients: JCOEFPTR, _ q: UnsafePointer<UInt16>?, _ v: Int) -> SIMD4<Float> {
        guard let q else { return .zero }
        let values = SIMD4<Int32>(truncatingIfNeeded: UnsafeRawPointer(coefficients + 8 * v).loadUnaligned(as: SIMD4<Int16>.self))
        let steps = SIMD4<Int32>(truncatingIfNeeded: UnsafeRawPointer(q + 8 * v).loadUnaligned(as: SIMD4<UInt16>.self))
        return SIMD4<Float>(values &* steps)
    }

    /// The 2-point IDCT: basis C(u) · cos((2x+1)uπ/4) / 2 is c and ±c.
    private static let twoPoint: iec_jpeg_idct_method = { _, component, coefficients, output, column in
        guard let component, let coefficients, let output else { return }
        let q = quantization(component)
        // Dequantized X(u, v), u, v < 2 (the first two lanes of rows 0 and 1), then the two
        // passes: sums and differences.
        let (r0, r1) = (row(coefficients, q, 0), row(coefficients, q, 1))
        let (t00, t01) = (c * (r0[0] + r1[0]), c * (r0[1] + r1[1])) // y = 0, over u
        let (t10, t11) = (c * (r0[0] - r1[0]), c * (r0[1] - r1[1])) // y = 1
        let bytes = samples(SIMD4(c * (t00 + t01), c * (t00 - t01), c * (t10 + t11), c * (t10 - t11)))
        for y in 0..<2 {
            guard let row = output[y] else { continue }
            (row[Int(column)], row[Int(column) + 1]) = (bytes[2 * y], bytes[2 * y + 1])
        }
    }

    /// libjpeg's quantization table of `component` (natural order), if latched.
    @inline(__always)
    private static func quantization(_ component: UnsafeMutablePointer<jpeg_component_info>) -> UnsafePointer<UInt16>? {
        component.pointee.quant_table.map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt16.self) }
    }

    /// Samples level-shifted, clamped to 0...255 and rounded to nearest (2²³ added: the
    /// float's low mantissa bits are then the integer).
    @inline(__always)
    private static func samples(_ values: SIMD4<Float>) -> SIMD4<UInt8> {
        var shifted = values + 128
        shifted.replace(with: 0, where: shifted .< 0)
        shifted.replace(with: 255, where: shifted .> 255)
        return SIMD4<UInt8>(truncatingIfNeeded: unsafeBitCast(shifted + 8_388_608, to: SIMD4<UInt32>.self))
    }
}
