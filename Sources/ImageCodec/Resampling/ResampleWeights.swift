/// Precomputed filter taps for resampling one axis from `sourceSize` to `targetSize` samples.
///
/// When shrinking, the kernel is stretched by the scale factor so that every source sample
/// contributes (antialiasing); taps are normalised to sum to 1 so flat areas stay exactly flat.
struct ResampleWeights: Sendable {
    let sourceSize: Int
    let targetSize: Int
    /// First source sample used by each target sample.
    let starts: [Int]
    /// Number of taps used by each target sample.
    let counts: [Int]
    /// Taps per target sample in `weights` (the largest count); unused taps are zero.
    let stride: Int
    let weights: [Float]

    init(sourceSize: Int, targetSize: Int) {
        precondition(sourceSize > 0 && targetSize > 0, "resample sizes are checked by the caller")
        self.sourceSize = sourceSize
        self.targetSize = targetSize
        let scale = Double(sourceSize) / Double(targetSize)
        let filterScale = max(scale, 1)
        let support = LanczosKernel.radius * filterScale
        // Every target sample spans at most this many source samples.
        let stride = min(sourceSize, Int((2 * support).rounded(.up)) + 2)
        var starts = [Int](repeating: 0, count: targetSize)
        var counts = [Int](repeating: 0, count: targetSize)
        var weights = [Float](repeating: 0, count: targetSize * stride)
        var taps = [Double](repeating: 0, count: stride)
        for target in 0..<targetSize {
            let center = (Double(target) + 0.5) * scale
            let first = max(0, Int((center - support + 0.5).rounded(.down)))
            let end = min(sourceSize, Int((center + support + 0.5).rounded(.down)), first + stride)
            let count = max(1, end - first)
            var sum = 0.0
            for tap in 0..<count {
                taps[tap] = LanczosKernel.value(at: (Double(first + tap) + 0.5 - center) / filterScale)
                sum += taps[tap]
            }
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
}
