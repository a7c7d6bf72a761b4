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

    /// The smallest libjpeg DCT scale M/8 (M in 1...8) whose output still covers the target in
    /// both directions, so the resampler only ever shrinks. libjpeg rounds scaled sizes up.
    static func jpegScaleNumerator(width: Int, height: Int, target: (width: Int, height: Int)) -> Int {
        for numerator in 1...8 {
            let scaledWidth = (width * numerator + 7) / 8
            let scaledHeight = (height * numerator + 7) / 8
            if scaledWidth >= target.width && scaledHeight >= target.height { return numerator }
        }
        return 8
    }
}
