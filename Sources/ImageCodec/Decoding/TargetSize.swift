/// The DCT scale a JPEG decode runs at.
enum TargetSize {
    /// How much larger than the target the DCT-scaled image must stay, so the Lanczos
    /// resampler does the last part of the reduction.
    ///
    /// DCT scaling is fast but filters like a box: scaling straight to just above the target
    /// (headroom 1) cost up to 0.013 SSIM against a full decode + Lanczos on the sample photos
    /// (Path.jpg, 2560 → 1080). With 1.5 the loss is under 0.0005 and decoding still skips most
    /// of the work (measured with Benchmarks/scripts/compare-vipsthumbnail.sh).
    package static let dctHeadroom = 1.5

    /// The smallest libjpeg DCT scale M/8 (M in 1...8) at which `crop` (in stored pixels) is
    /// still at least `headroom` × the target in both directions (or full size, if that is
    /// less). libjpeg rounds scaled sizes up.
    static func jpegScaleNumerator(crop: PixelRect, target: (width: Int, height: Int),
                                   headroom: Double = dctHeadroom, powerOfTwoOnly: Bool = false) -> Int {
        let neededWidth = Double(target.width) * headroom
        let neededHeight = Double(target.height) * headroom
        for numerator in powerOfTwoOnly ? [1, 2, 4, 8] : Array(1...8) {
            let scaledWidth = (crop.width * Double(numerator) / 8).rounded(.up)
            let scaledHeight = (crop.height * Double(numerator) / 8).rounded(.up)
            if scaledWidth >= neededWidth && scaledHeight >= neededHeight { return numerator }
        }
        return 8
    }
}
