/// The DCT scale a JPEG decode runs at.
enum TargetSize {
    /// How much larger than the target the DCT-scaled image must stay at the scales 3/8, 5/8,
    /// 6/8 and 7/8, so the Lanczos resampler does the last part of the reduction.
    ///
    /// libjpeg-turbo makes those scales in the DCT domain (jidctint.c: an N-point IDCT of each
    /// block's N lowest coefficients), a proper low-pass filter. Scaling straight to just above
    /// the target (headroom 1) cost up to 0.013 SSIM against a full decode + Lanczos; from 1.5
    /// on, none of 38 decodes at 3/8 and 14 at 6/8 (22 JPEGs fitted into seven sizes from 256 to
    /// 1280) lost more than 0.0003 against vipsthumbnail.
    package static let dctHeadroom = 1.5

    /// The same at the scales 1/8, 2/8 and 4/8, which libjpeg-turbo makes differently
    /// (jidctred.c): a full 8-point IDCT averaged over runs of 2 or 4 pixels, or the DC term
    /// alone — box filters, which alias. Lanczos removes that only with about 2× left: at
    /// 1.5-1.875× left these scales lost 0.002-0.011 SSIM against vipsthumbnail on the most
    /// detailed photos (Elephants-q90.jpg fitted into 640 at 2/8, into 1280 at 4/8; Path.jpg
    /// into 400 and 800; SafeLanding.jpg filled into 800 at 4/8 with 1.8× left); from 1.9×, none
    /// did. libvips, which decodes at these scales only, leaves 2× as well.
    package static let boxScaleHeadroom = 2.0

    /// The smallest libjpeg DCT scale M/8 (M in 1...8) at which `crop` (in stored pixels) is
    /// still at least `headroom` × the target in both directions (`boxHeadroom` × at the
    /// box-filter scales 1/8, 2/8 and 4/8), or full size if none is. libjpeg rounds scaled
    /// sizes up.
    static func jpegScaleNumerator(crop: PixelRect, target: (width: Int, height: Int), headroom: Double = dctHeadroom,
                                   boxHeadroom: Double = boxScaleHeadroom, powerOfTwoOnly: Bool = false) -> Int {
        for numerator in powerOfTwoOnly ? [1, 2, 4, 8] : Array(1...8) {
            let needed = [1, 2, 4].contains(numerator) ? boxHeadroom : headroom
            let scaledWidth = (crop.width * Double(numerator) / 8).rounded(.up)
            let scaledHeight = (crop.height * Double(numerator) / 8).rounded(.up)
            if scaledWidth >= Double(target.width) * needed && scaledHeight >= Double(target.height) * needed { return numerator }
        }
        return 8
    }
}
