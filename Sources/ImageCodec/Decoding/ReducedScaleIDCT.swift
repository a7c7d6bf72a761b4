import CImageCodecShim

/// Inverse DCTs for the reduced DCT scales 2/8 to 7/8 that low-pass filter, in place of
/// libjpeg-turbo's own there.
///
/// libjpeg-turbo makes an 8×8 block's 4×4 and 2×2 outputs in `jidctred.c`: the full 8-point
/// IDCT with each run of 2 (or 4) outputs averaged, a box filter, which aliases. Its 3/8, 5/8,
/// 6/8 and 7/8 (`jidctint.c`) instead apply an N-point IDCT to the block's N×N lowest
/// coefficients: the block's band-limited signal sampled at N points, a proper low-pass, but in
/// plain integer C. The box at 4/8 needed 2× left to Lanczos where the others need 1.75× (see
/// `TargetSize`), which sent many 12 MP photos from the SIMD 4/8 to the plain-C 5/8.
///
/// The engine's (`iec_idct_scaled` in CImageKernels) computes the band-limited signal at every
/// one of these scales: for output sample x of N and coefficient u, with C(0) = 1/√2 and C(u) = 1
/// otherwise, s(x, y) = ¼ Σᵤ Σᵥ C(u) C(v) F(u, v) cos((2x+1)uπ/2N) cos((2y+1)vπ/2N) + 128, rounded
/// and clamped to 0...255 — T.81's 8-point IDCT evaluated at the centres of N wider pixels, using
/// only the frequencies N samples can carry (all 8 when 4:2:0 chroma is decoded at 10, 12 or 14
/// per block). In float, as two products with the basis matrix, AVX2 where the CPU has it and a
/// portable twin elsewhere, the same bytes from both. Same inputs and outputs as libjpeg's
/// methods, installed per component through `iec_jpeg_replace_idct`; libjpeg keeps its SIMD
/// IDCTs at 8/8 and 1/8 (where the luma is the DC term either way).
enum ReducedScaleIDCT {
    /// The method for a component libjpeg decodes at `scaledSize`×`scaledSize` per block, or nil
    /// where libjpeg's own is kept.
    static func method(scaledSize: Int) -> iec_jpeg_idct_method? {
        iec_jpeg_scaled_idct(Int32(scaledSize))
    }
}
