/// The DCT scale a JPEG decode runs at.
///
/// The rule: the smallest M/8 that leaves at least `dctHeadroom` (1.75×) to Lanczos at 3/8 to
/// 7/8 and `boxScaleHeadroom` (2×) at 1/8 and 2/8. Measured by
/// `Benchmarks/scripts/dct_scale_sweep.py`: the 22 JPEGs of SampleImages/ and the outside set
/// fitted into eight sizes (256-1600) and filled into four (256-800), lossless outputs, SSIM
/// against a full decode + Lanczos, engine − vipsthumbnail.
/// - libjpeg-turbo's 2/8 and 4/8 average 2 or 4 outputs of the full IDCT (`jidctred.c`), box
///   filters that alias: at 1.5-1.875× left they lost up to 0.011 (Elephants-q90.jpg into 640),
///   so they needed 2×, which sent most 12 MP photos into 1080 to the plain-C 5/8. The engine
///   replaces them with low-pass IDCTs (`ReducedScaleIDCT`), as libjpeg's 3/8, 5/8, 6/8 and 7/8
///   are (`jidctint.c`): 4/8 then behaves like those and is as fast as libjpeg's SIMD one.
/// - Those low-pass scales still lose at exactly 1.5× left, where the rule used to stop: Path.jpg
///   at 3/8 (−0.0022 into 640, −0.0025 filled into 400), Elephants-q90.jpg at 4/8 (−0.0015 into
///   1280); at 1.6×, SafeLanding.jpg at 4/8 −0.0017 into 1600. From 1.75× the worst of all 264
///   cases is −0.0011 (Grey.jpg into 1280, at 7/8 as at 6/8: the resampler, not the scale).
/// - 2/8 keeps only 2×2 coefficients per block; with the engine's IDCT it still lost 0.0034 at
///   1.6× (Path.jpg into 400), so it keeps 2×, where it scores up to 0.0012 above libjpeg's.
///   1/8 is each block's DC term alone, the mean of 8×8 pixels.
/// Against the rule before (2× at 1/8, 2/8 and 4/8 with libjpeg's IDCTs, 1.5× elsewhere): 23%
/// less CPU on the 22 JPEGs fitted into 1080, the same filled into 512, worst case −0.0025 → −0.0011.
enum TargetSize {
    /// How much larger than the target the DCT-scaled image must stay at the low-pass scales,
    /// 3/8 to 7/8, so the Lanczos resampler does the last part of the reduction.
    package static let dctHeadroom = 1.75

    /// The same at the coarse scales `boxScales`.
    package static let boxScaleHeadroom = 2.0

    /// The scales that need `boxScaleHeadroom` with the engine's IDCTs, and with libjpeg-turbo's
    /// own (whose 2/8 and 4/8 are box filters).
    static let boxScales: Set<Int> = [1, 2]
    static let libjpegBoxScales: Set<Int> = [1, 2, 4]

    /// The smallest libjpeg DCT scale M/8 (M in 1...8) at which `crop` (in stored pixels) is
    /// still at least `headroom` × the target in both directions (`boxHeadroom` × at the
    /// scales `boxScales`), or full size if none is.
    ///
    /// The exact scaled size is compared, not libjpeg's, which rounds up: a 2048×1350 photo
    /// fitted into 512×338 at 2/8 is 337.5 rows, and libjpeg's 338 would pass with no reduction
    /// left but the 2/8 IDCT's own, 0.0016 SSIM below thumbor's 4/8 + Lanczos. The field's
    /// rules (Pillow's `draft`, imgproxy's shrink-on-load) compare exact ratios too.
    static func jpegScaleNumerator(
        crop: PixelRect, target: (width: Int, height: Int), headroom: Double = dctHeadroom,
        boxHeadroom: Double = boxScaleHeadroom, boxScales: Set<Int> = boxScales,
        powerOfTwoOnly: Bool = false
    ) -> Int {
        for numerator in powerOfTwoOnly ? [1, 2, 4, 8] : Array(1...8) {
            let needed = boxScales.contains(numerator) ? boxHeadroom : headroom
            let scaledWidth = crop.width * Double(numerator) / 8
            let scaledHeight = crop.height * Double(numerator) / 8
            if scaledWidth >= Double(target.width) * needed && scaledHeight >= Double(target.height) * needed { return numerator }
        }
        return 8
    }

    /// The factor (at most 1) libwebp's rescaler shrinks a bitstream by: the smallest at which
    /// `crop` is still `headroom` × the target in both directions. 1: decode at full size.
    static func webpScale(crop: PixelRect, target: (width: Int, height: Int), headroom: Double) -> Double {
        min(1, max(Double(target.width) * headroom / crop.width, Double(target.height) * headroom / crop.height))
    }
}
