/// Precomputed filter taps for resampling one axis: the span [`offset`, `offset + length`) of
/// `sourceSize` samples (by default all of them) to `targetSize` samples.
///
/// When shrinking, the kernel is stretched by the scale factor so that every source sample
/// contributes (antialiasing); taps are normalised to sum to 1 so flat areas stay exactly flat.
/// Only samples the span touches contribute, so resampling a crop gives what cropping first
/// (on whole pixels) and resampling the rest gives; a fractional offset is honoured, not rounded.
struct ResampleWeights: Sendable {
    let sourceSize: Int
    let targetSize: Int
    /// First source sample used by each target sample.
    let starts: ChargedArray<Int>
    /// Number of taps used by each target sample.
    let counts: ChargedArray<Int>
    /// Taps per target sample in `weights` (the largest count); unused taps are zero.
    let stride: Int
    let weights: ChargedArray<Float>

    init(sourceSize: Int, targetSize: Int, offset: Double = 0, length: Double? = nil) throws(ImageCodecError) {
        let length = length ?? Double(sourceSize)
        precondition(sourceSize > 0 && targetSize > 0 && length > 0, "resample sizes are checked by the caller")
        self.sourceSize = sourceSize
        self.targetSize = targetSize
        let scale = length / Double(targetSize)
        let filterScale = max(scale, 1)
        let support = LanczosKernel.radius * filterScale
        // The samples the span touches.
        let lower = min(max(0, Int(offset.rounded(.down))), sourceSize - 1)
        let upper = min(sourceSize, max(lower + 1, Int((offset + length).rounded(.up))))
        let stride = Self.stride(length: length, samples: upper - lower, targetSize: targetSize)
        var starts = try ChargedArray<Int>(repeating: 0, count: targetSize)
        var counts = try ChargedArray<Int>(repeating: 0, count: targetSize)
        var weights = try ChargedArray<Float>(repeating: 0, count: targetSize * stride)
        var taps = try ChargedArray<Double>(repeating: 0, count: stride)
        // Same size on whole pixels: every kernel sample but the centre falls on a zero of the
        // sinc, so the pass is a copy. One tap of weight 1 says so exactly, instead of eight
        // taps whose outer weights are rounding noise (a `fill` whose crop spans one axis).
        let identity = scale == 1 && offset == offset.rounded()
        for target in 0..<targetSize {
            if identity {
                (starts[target], counts[target], weights[target * stride]) = (min(lower + target, sourceSize - 1), 1, 1)
                continue
            }
            let center = offset + (Double(target) + 0.5) * scale
            let first = min(max(lower, Int((center - support + 0.5).rounded(.down))), upper - 1)
            let end = min(upper, Int((center + support + 0.5).rounded(.down)), first + stride)
            let count = max(1, end - first)
            taps.elements.withUnsafeMutableBufferPointer { taps in
                LanczosKernel.sample(
                    from: (Double(first) + 0.5 - center) / filterScale, step: 1 / filterScale,
                    into: UnsafeMutableBufferPointer(rebasing: taps[0..<count]))
            }
            var sum = 0.0
            for tap in 0..<count { sum += taps[tap] }
            if sum == 0 { (taps[0], sum) = (1, 1) }
            for tap in 0..<count { weights[target * stride + tap] = Float(taps[tap] / sum) }
            starts[target] = min(first, sourceSize - 1)
            counts[target] = count
        }
        self.starts = starts
        self.counts = counts
        self.stride = stride
        self.weights = weights
    }

    /// Taps per target sample: every target sample spans at most this many of the `samples`
    /// source samples when `length` of them become `targetSize`.
    static func stride(length: Double, samples: Int, targetSize: Int) -> Int {
        let support = LanczosKernel.radius * max(length / Double(targetSize), 1)
        return min(samples, Int((2 * support).rounded(.up)) + 2)
    }
}
