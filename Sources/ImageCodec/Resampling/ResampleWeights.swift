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
        var starts = [Int](repeating: 0, count: targetSize)
        var counts = [Int](repeating: 0, count: targetSize)
        var taps: [[Float]] = []
        taps.reserveCapacity(targetSize)
        for target in 0..<targetSize {
            let center = (Double(target) + 0.5) * scale
            let first = max(0, Int((center - support + 0.5).rounded(.down)))
            let end = min(sourceSize, Int((center + support + 0.5).rounded(.down)))
            var values = (first..<max(end, first + 1)).map { source in
                LanczosKernel.value(at: (Double(source) + 0.5 - center) / filterScale)
            }
            let sum = values.reduce(0, +)
            if sum != 0 { values = values.map { $0 / sum } } else { values = [1] }
            starts[target] = min(first, sourceSize - 1)
            counts[target] = values.count
            taps.append(values.map(Float.init))
        }
        let stride = counts.max() ?? 1
        var weights = [Float](repeating: 0, count: targetSize * stride)
        for (target, values) in taps.enumerated() {
            for (tap, value) in values.enumerated() { weights[target * stride + tap] = value }
        }
        self.starts = starts
        self.counts = counts
        self.stride = stride
        self.weights = weights
    }
}
