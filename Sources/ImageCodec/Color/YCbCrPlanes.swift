import CImageKernels

/// A YCbCr → RGB matrix from ITU-T H.273's `matrix_coefficients` and full-range flag (its
/// equations for Kr and Kb, and for the narrow range's 219 and 224 levels), in the fixed point
/// of `iec_ycbcr_to_rgb_row`.
struct YCbCrMatrix: Sendable {
    let coefficients: iec_ycbcr_matrix

    /// nil for matrices that are not a Kr/Kb weighting (identity, YCgCo, ICtCp, constant
    /// luminance, chromaticity-derived), which stay with the library's own conversion.
    /// Unspecified (2) is BT.601, as libheif reads it.
    init?(matrixCoefficients: Int, fullRange: Bool) {
        let (kr, kb): (Double, Double)
        switch matrixCoefficients {
        case 1: (kr, kb) = (0.2126, 0.0722) // BT.709
        case 2, 5, 6: (kr, kb) = (0.299, 0.114) // unspecified, BT.470 B/G, BT.601
        case 9: (kr, kb) = (0.2627, 0.0593) // BT.2020 non-constant luminance
        default: return nil
        }
        let kg = 1 - kr - kb
        // The narrow range spans 219 levels of luma and 224 of chroma from 16 and 128.
        let (luma, chroma) = fullRange ? (1.0, 1.0) : (255.0 / 219, 255.0 / 224)
        // Only +, −, × and ÷ on doubles, rounded once: the same integers on every CPU.
        func q16(_ value: Double) -> Int32 { Int32((value * 65536).rounded()) }
        coefficients = iec_ycbcr_matrix(
            luma: q16(luma), luma_offset: fullRange ? 0 : 16, cr_r: q16(2 * (1 - kr) * chroma),
            cb_g: q16(2 * kb * (1 - kb) / kg * chroma), cr_g: q16(2 * kr * (1 - kr) / kg * chroma), cb_b: q16(2 * (1 - kb) * chroma))
    }
}

/// Three 8-bit planes a library decoded into (4:2:0 or 4:4:4), converted to interleaved RGB a
/// row at a time: the decode never holds an RGB copy of the whole image.
///
/// Chroma is interpolated to the luma grid, not repeated: 4:2:0 samples sit on the even
/// columns and halfway between two rows (H.273 chroma location 0, HEVC's default), so a
/// row takes ¾ of its own chroma row and ¼ of the nearer neighbour, and an odd column the mean
/// of the samples on either side.
struct YCbCrPlanes {
    let luma: UnsafePointer<UInt8>
    let cb: UnsafePointer<UInt8>
    let cr: UnsafePointer<UInt8>
    let lumaStride: Int
    let cbStride: Int
    let crStride: Int
    let width: Int
    let height: Int
    let chromaWidth: Int
    let chromaHeight: Int

    /// Whether chroma has half the rows and columns (4:2:0) rather than all of them (4:4:4).
    var subsampled: Bool { chromaWidth != width || chromaHeight != height }

    /// Checks what the library reported: planes of the sizes their layout implies, strides
    /// that hold a row.
    func validate() throws(ImageCodecError) {
        let halves = chromaWidth == (width + 1) / 2 && chromaHeight == (height + 1) / 2
        let full = chromaWidth == width && chromaHeight == height
        guard width > 0, height > 0, halves || full else {
            throw .corruptData("the decoder's \(chromaWidth)×\(chromaHeight) chroma does not fit its \(width)×\(height) image")
        }
        guard lumaStride >= width, cbStride >= chromaWidth, crStride >= chromaWidth else {
            throw .corruptData("the decoder's planes are narrower than their rows")
        }
    }

    /// Hands `sink` each row as RGB.
    func convert(_ matrix: YCbCrMatrix, into sink: some RowSink) throws(ImageCodecError) {
        try validate()
        let shift: Int32 = subsampled ? 1 : 0
        var row = try ChargedArray<UInt8>(repeating: 0, count: width * 3)
        var scratch = try ChargedArray<Int32>(repeating: 0, count: 2 * chromaWidth)
        var checkpoint = CancellationCheckpoint()
        var coefficients = matrix.coefficients
        try row.elements.withUnsafeMutableBufferPointer { (rgb) throws(ImageCodecError) in
            try scratch.elements.withUnsafeMutableBufferPointer { (scratch) throws(ImageCodecError) in
                for y in 0..<height {
                    try checkpoint.advance(by: width)
                    let (near, far, quarters) = chromaRows(for: y)
                    iec_ycbcr_to_rgb_row(
                        luma + y * lumaStride, cb + near * cbStride, cr + near * crStride, cb + far * cbStride, cr + far * crStride,
                        quarters, shift, width, chromaWidth, &coefficients, scratch.baseAddress!, rgb.baseAddress!)
                    sink.consume(rgb.baseAddress!)
                }
            }
        }
    }

    /// The chroma rows luma row `y` blends and the first one's weight in quarters: 4:2:0 rows
    /// lie a quarter of a chroma row above or below their chroma sample (¾ near, ¼ far, the
    /// edge rows repeated); 4:4:4 rows take their own.
    func chromaRows(for y: Int) -> (near: Int, far: Int, quarters: Int32) {
        guard subsampled else { return (y, y, 4) }
        let near = y / 2
        let far = y % 2 == 0 ? max(near - 1, 0) : min(near + 1, chromaHeight - 1)
        return (near, far, 3)
    }
}
