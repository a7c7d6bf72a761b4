import CImageCodecShim
import CImageKernels
import Foundation

/// The engine's JPEG encoder: samples stay floats from RGB through YCbCr, chroma downsampling
/// and the DCT; quantization uses perceptually shaped tables and a per-block dead zone from the
/// masking field; libjpeg-turbo entropy-codes the result (optimised Huffman tables, baseline or
/// progressive scans), so the output is a standard JPEG every decoder reads.
///
/// Works one iMCU row (8 or 16 pixel rows) at a time; what it holds beyond the bitmap is
/// libjpeg's coefficient arrays (2 bytes a coefficient: 3 bytes a pixel at 4:2:0, 6 at 4:4:4),
/// a float per 64 pixels for the masking field, and the output.
enum PerceptualJPEGEncoder {
    /// `bitmap` is opaque 8-bit gray or RGB.
    static func encode(
        _ bitmap: Bitmap, options: JPEGEncodingOptions, tuning: PerceptualJPEGTuning, maximumOutputBytes: Int
    ) throws(ImageCodecError) -> Data {
        let colour = bitmap.format.channels >= 3
        let (hSamp, vSamp) = colour ? options.chromaSubsampling.lumaSamplingFactors : (1, 1)
        let quantization = PerceptualQuantization(
            quality: Float(options.quality) + Float(options.qualityFraction),
            chromaQuality: Float(options.chromaQuality ?? options.quality) + Float(options.qualityFraction), tuning: tuning)
        let field = try MaskingField(bitmap, tuning: tuning)
        let profile = options.preservesICCProfile ? bitmap.iccProfile ?? [] : []
        let created = quantization.lumaTable.withUnsafeBufferPointer { luma in
            quantization.chromaTable.withUnsafeBufferPointer { chroma in
                profile.withUnsafeBufferPointer { icc in
                    var parameters = iec_jpeg_coefficient_params(
                        width: UInt32(bitmap.width), height: UInt32(bitmap.height), components: colour ? 3 : 1,
                        luma_h_samp: Int32(hSamp), luma_v_samp: Int32(vSamp), progressive: options.progressive ? 1 : 0,
                        luma_quant_table: luma.baseAddress, chroma_quant_table: chroma.baseAddress,
                        icc_profile: icc.baseAddress, icc_length: UInt32(icc.count), max_output_bytes: maximumOutputBytes,
                        stop: ImageCodecError.stopProbe)
                    return iec_jpeg_coefficient_encoder_create(&parameters)
                }
            }
        }
        guard let encoder = created else { throw .outOfMemory }
        defer { iec_jpeg_coefficient_encoder_destroy(encoder) }
        try check(iec_jpeg_coefficient_encoder_status(encoder), encoder)

        let lumaBlocksWide = Int(iec_jpeg_coefficient_blocks_wide(encoder, 0))
        let stripe = try Stripe(bitmap: bitmap, lumaBlocksWide: lumaBlocksWide, hSamp: hSamp, vSamp: vSamp)
        let stripes = Int(iec_jpeg_coefficient_blocks_high(encoder, 0)) / vSamp
        // One block row's masking strengths.
        var strengths = try ChargedArray<Float>(repeating: 0, count: lumaBlocksWide)
        try strengths.elements.withUnsafeMutableBufferPointer { (strengths) throws(ImageCodecError) in
            for index in 0..<stripes {
                // A stripe is 8 or 16 rows.
                try ImageCodecError.checkCancellation()
                stripe.load(iMCURow: index)
                for row in 0..<vSamp {
                    let blockRow = index * vSamp + row
                    for block in 0..<lumaBlocksWide { strengths[block] = field.strength(x: block, y: blockRow) }
                    try fill(
                        encoder, component: 0, blockRow: blockRow, blocks: stripe.luma(row: row), strengths: strengths,
                        quantization: quantization, chroma: false)
                }
                guard colour else { continue }
                stripe.downsampleChroma()
                // A chroma block's strength is the mean of the luma blocks it covers.
                for block in 0..<(lumaBlocksWide / hSamp) {
                    var sum: Float = 0
                    for y in 0..<vSamp {
                        for x in 0..<hSamp { sum += field.strength(x: block * hSamp + x, y: index * vSamp + y) }
                    }
                    strengths[block] = sum / Float(hSamp * vSamp)
                }
                for component in 1...2 {
                    try fill(
                        encoder, component: component, blockRow: index, blocks: stripe.chroma(component), strengths: strengths,
                        quantization: quantization, chroma: true)
                }
            }
        }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        try check(iec_jpeg_coefficient_encoder_finish(encoder, &output, &length), encoder)
        guard let output else { throw .outOfMemory }
        return try ImageEncoder.adopt(output, length: Int(length))
    }

    /// Transforms and quantizes every block of one block row of `component`: block b's samples
    /// from `blocks`, its masking strength `strengths[b]`. DCT and quantization run in
    /// CImageKernels: AVX2 where the CPU has it, the same coefficients everywhere.
    private static func fill(
        _ encoder: OpaquePointer, component: Int, blockRow: Int, blocks: Stripe.BlockRow,
        strengths: UnsafeMutableBufferPointer<Float>, quantization: PerceptualQuantization, chroma: Bool
    ) throws(ImageCodecError) {
        var row: UnsafeMutablePointer<JCOEF>?
        try check(iec_jpeg_coefficient_row(encoder, Int32(component), UInt32(blockRow), &row), encoder)
        guard let row else { throw .encodingFailed("libjpeg returned no coefficient row") }
        let blocksWide = Int(iec_jpeg_coefficient_blocks_wide(encoder, Int32(component)))
        guard blocksWide <= strengths.count else { throw .encodingFailed("libjpeg's coefficient row is wider than the stripe") }
        let reciprocals = chroma ? quantization.chromaReciprocals : quantization.lumaReciprocals
        let masked = chroma ? quantization.chromaMaskedDeadZone : quantization.lumaMaskedDeadZone
        ForwardDCT.transposedBasis.withUnsafeBufferPointer { basis in
            ForwardDCT.cosines.withUnsafeBufferPointer { cosines in
                reciprocals.withUnsafeBytes { reciprocals in
                    quantization.flatDeadZone.withUnsafeBytes { deadZone in
                        masked.withUnsafeBytes { masked in
                            iec_fdct_quantize_row(
                                blocks.first, blocks.stride, blocksWide, strengths.baseAddress!, basis.baseAddress!,
                                cosines.baseAddress!, Self.floats(reciprocals), Self.floats(deadZone), Self.floats(masked), row)
                        }
                    }
                }
            }
        }
    }

    /// A table of eight SIMD8<Float> rows as its 64 floats.
    private static func floats(_ table: UnsafeRawBufferPointer) -> UnsafePointer<Float> {
        table.baseAddress!.assumingMemoryBound(to: Float.self)
    }

    private static func check(_ status: iec_status, _ encoder: OpaquePointer) throws(ImageCodecError) {
        try ImageEncoder.checkEncoder(status, message: String(cString: iec_jpeg_coefficient_encoder_message(encoder)).singleLine)
    }
}

extension JPEGEncodingOptions.ChromaSubsampling {
    /// Luma's horizontal and vertical sampling factors (chroma's are 1).
    var lumaSamplingFactors: (Int, Int) {
        switch self {
        case .s420: (2, 2)
        case .s422: (2, 1)
        case .s444: (1, 1)
        }
    }
}
