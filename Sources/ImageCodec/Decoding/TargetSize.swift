/// Output-size arithmetic shared by the decoders.
enum TargetSize {
    /// The size whose longest side is at most `maxPixelSize`, keeping the aspect ratio, never
    /// larger than the source and never zero.
    static func fitting(width: Int, height: Int, maxPixelSize: Int?) -> (width: Int, height: Int) {
        guard let limit = maxPixelSize, limit > 0 else { return (width, height) }
        let longest = max(width, height)
        guard longest > limit else { return (width, height) }
        let scale = Double(limit) / Double(longest)
        let scaledWidth = width == longest ? limit : max(1, Int((Double(width) * scale).rounded()))
        let scaledHeight = height == longest ? limit : max(1, Int((Double(height) * scale).rounded()))
        return (scaledWidth, scaledHeight)
    }

    /// How much larger than the target the DCT-scaled image must stay, so the Lanczos
    /// resampler does the last part of the reduction.
    ///
    /// DCT scaling is fast but filters like a box: scaling straight to just above the target
    /// (headroom 1) cost up to 0.013 SSIM against a full decode + Lanczos on the sample photos
    /// (Path.jpg, 2560 → 1080). With 1.5 the loss is under 0.0005 and decoding still skips most
    /// of the work (measured with Benchmarks/scripts/compare-vipsthumbnail.sh).
    package static let dctHeadroom = 1.5

    /// The smallest libjpeg DCT scale M/8 (M in 1...8) whose output is still at least
    /// `headroom` × the target in both directions (or full size, if that is less). libjpeg
    /// rounds scaled sizes up.
    static func jpegScaleNumerator(width: Int, height: Int, target: (width: Int, height: Int),
                                   headroom: Double = dctHeadroom, powerOfTwoOnly: Bool = false) -> Int {
        let neededWidth = Double(target.width) * headroom
        let neededHeight = Double(target.height) * headroom
        for numerator in powerOfTwoOnly ? [1, 2, 4, 8] : Array(1...8) {
            let scaledWidth = (width * numerator + 7) / 8
            let scaledHeight = (height * numerator + 7) / 8
            if Double(scaledWidth) >= neededWidth && Double(scaledHeight) >= neededHeight { return numerator }
        }
        return 8
    }
}
