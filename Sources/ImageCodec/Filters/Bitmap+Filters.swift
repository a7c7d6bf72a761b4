import Foundation

/// Blur, sharpen and pixelate: imgproxy's `bl`, `sh` and `pix`, applied to a resized image.
///
/// The blur is three box blurs in a row, whose widths are chosen so that their variances add
/// up to σ² (the standard approximation of a Gaussian, within about 2 % of its weights): each
/// pass is a running sum, so the cost per pixel does not grow with σ, and a URL's σ cannot buy
/// more CPU than a small one. Edges repeat their outermost pixel. Every channel, alpha
/// included, is filtered alike.
extension Bitmap {
    /// The largest σ the filters take: far past any useful blur of a thumbnail.
    public static let maximumFilterSigma = 100.0

    /// Blurred with a Gaussian of standard deviation `sigma` pixels (0: unchanged).
    public func blurred(sigma: Double) throws(ImageCodecError) -> Bitmap {
        guard sigma.isFinite, (0...Self.maximumFilterSigma).contains(sigma) else {
            throw .invalidArgument("blur sigma must be 0-\(Self.maximumFilterSigma), got \(sigma)")
        }
        guard sigma > 0 else { return self }
        // Three boxes cannot make a small σ (their widths are odd integers): below 2, the
        // Gaussian's own weights, at most 13 taps.
        guard sigma >= 2 else {
            let radius = Int((3 * sigma).rounded(.up))
            let weights = (-radius...radius).map { Float(exp(-Double($0 * $0) / (2 * sigma * sigma))) }
            let total = weights.reduce(0, +)
            return try withFloats { (values) throws(ImageCodecError) in try convolve(&values, weights: weights.map { $0 / total }) }
        }
        let radii = Self.gaussianApproximation(sigma: sigma)
        return try withFloats { (values) throws(ImageCodecError) in
            for radius in radii { try boxBlur(&values, radius: radius) }
        }
    }

    /// Sharpened by an unsharp mask: the image plus its difference from its blur at `sigma`
    /// (weight 1), clamped to 0...255 (0: unchanged).
    public func sharpened(sigma: Double) throws(ImageCodecError) -> Bitmap {
        guard sigma.isFinite, (0...Self.maximumFilterSigma).contains(sigma) else {
            throw .invalidArgument("sharpen sigma must be 0-\(Self.maximumFilterSigma), got \(sigma)")
        }
        guard sigma > 0 else { return self }
        let blur = try blurred(sigma: sigma)
        let rowBytes = bytesPerRow
        return try Bitmap.make(width: width, height: height, format: format, iccProfile: iccProfile) { (output) throws(ImageCodecError) in
            var checkpoint = CancellationCheckpoint()
            for row in 0..<height {
                try checkpoint.advance(by: width)
                for index in row * rowBytes..<(row + 1) * rowBytes {
                    output[index] = UInt8(clamping: 2 * Int(pixels[index]) - Int(blur.pixels[index]))
                }
            }
        }
    }

    /// Each `size` × `size` block (the last ones cut by the edges) filled with its mean colour
    /// (1: unchanged).
    public func pixelated(size: Int) throws(ImageCodecError) -> Bitmap {
        guard (1...Canvas.maximumSide).contains(size) else { throw .invalidArgument("pixelate size must be 1-\(Canvas.maximumSide), got \(size)") }
        guard size > 1 else { return self }
        let (width, height, channels) = (width, height, format.channels)
        return try Bitmap.make(width: width, height: height, format: format, iccProfile: iccProfile) { (pixels) throws(ImageCodecError) in
            var sums = [Int](repeating: 0, count: channels) // small: one sum a channel
            var checkpoint = CancellationCheckpoint()
            for top in stride(from: 0, to: height, by: size) {
                for left in stride(from: 0, to: width, by: size) {
                    let (bottom, right) = (min(top + size, height), min(left + size, width))
                    // Each block is read and written once: its pixels are the work.
                    try checkpoint.advance(by: (bottom - top) * (right - left))
                    for channel in 0..<channels { sums[channel] = 0 }
                    for y in top..<bottom {
                        for x in left..<right {
                            for channel in 0..<channels { sums[channel] += Int(self.pixels[(y * width + x) * channels + channel]) }
                        }
                    }
                    let count = (bottom - top) * (right - left)
                    for y in top..<bottom {
                        for x in left..<right {
                            for channel in 0..<channels { pixels[(y * width + x) * channels + channel] = UInt8((sums[channel] + count / 2) / count) }
                        }
                    }
                }
            }
        }
    }

    /// The radii of three box blurs whose variances add up to σ² (widths 2r + 1, two sizes
    /// apart at most).
    static func gaussianApproximation(sigma: Double) -> [Int] {
        let passes = 3.0
        var lower = Int((12 * sigma * sigma / passes + 1).squareRoot())
        if lower % 2 == 0 { lower -= 1 }
        let upper = lower + 2
        let lowerCount = Int(
            ((12 * sigma * sigma - passes * Double(lower * lower) - 4 * passes * Double(lower) - 3 * passes) / Double(-4 * lower - 4))
                .rounded())
        return (0..<3).map { pass in ((pass < lowerCount ? lower : upper) - 1) / 2 }
    }

    /// The bitmap as floats (charged), changed by `body`, rounded back to bytes.
    private func withFloats(_ body: (inout ChargedArray<Float>) throws(ImageCodecError) -> Void) throws(ImageCodecError) -> Bitmap {
        var values = try ChargedArray<Float>(uninitializedCount: pixels.count) { values in
            for index in pixels.indices { values[index] = Float(pixels[index]) }
        }
        try body(&values)
        return try Bitmap.make(width: width, height: height, format: format, iccProfile: iccProfile) { bytes in
            for index in bytes.indices { bytes[index] = UInt8(clamping: Int((values[index] + 0.5).rounded(.down))) }
        }
    }

    /// Bytes the filters hold for a `width` × `height` image of `channels`: the float copy and
    /// the result (for planning a render's memory).
    public static func filterBytes(width: Int, height: Int, channels: Int) -> Int { width * height * channels * 6 }

    /// A symmetric kernel (odd length) along rows, then along columns.
    private func convolve(_ values: inout ChargedArray<Float>, weights: [Float]) throws(ImageCodecError) {
        let radius = weights.count / 2
        try forEachLine(of: &values) { line, output, count in
            for position in 0..<count {
                var sum: Float = 0
                for (index, weight) in weights.enumerated() { sum += weight * line[min(max(position + index - radius, 0), count - 1)] }
                output[position] = sum
            }
        }
    }

    /// One box blur of `radius` along rows, then along columns, with running sums.
    private func boxBlur(_ values: inout ChargedArray<Float>, radius: Int) throws(ImageCodecError) {
        guard radius > 0 else { return }
        let scale = 1 / Float(2 * radius + 1)
        try forEachLine(of: &values) { line, output, count in
            // Edges repeat their outermost value.
            func sample(_ position: Int) -> Float { line[min(max(position, 0), count - 1)] }
            // In Double: a running sum over a long row must not drift.
            var sum = 0.0
            for offset in -radius...radius { sum += Double(sample(offset)) }
            for position in 0..<count {
                output[position] = Float(sum) * scale
                sum += Double(sample(position + radius + 1) - sample(position - radius))
            }
        }
    }

    /// Filters every row, then every column, of every channel of `values`: `body` reads the
    /// line's first `count` values and writes as many into the output, which replaces it. Each
    /// line is a checkpoint's worth of work (whatever the kernel: the blurs' cost per pixel does
    /// not grow with σ).
    private func forEachLine(
        of values: inout ChargedArray<Float>,
        _ body: (_ line: UnsafeMutableBufferPointer<Float>, _ output: UnsafeMutableBufferPointer<Float>, _ count: Int) -> Void
    ) throws(ImageCodecError) {
        let (width, height, channels) = (self.width, self.height, format.channels)
        var lines = try ChargedArray<Float>(repeating: 0, count: 2 * max(width, height))
        var checkpoint = CancellationCheckpoint()
        try lines.elements.withUnsafeMutableBufferPointer { (lines) throws(ImageCodecError) in
            let length = max(width, height)
            let line = UnsafeMutableBufferPointer(rebasing: lines[0..<length])
            let output = UnsafeMutableBufferPointer(rebasing: lines[length..<2 * length])
            try values.elements.withUnsafeMutableBufferPointer { (values) throws(ImageCodecError) in
                for (count, lineCount, at) in [
                    (width, height, { (row: Int, x: Int) in (row * width + x) * channels }),
                    (height, width, { (column: Int, y: Int) in (y * width + column) * channels })
                ] {
                    for index in 0..<lineCount {
                        try checkpoint.advance(by: count * channels)
                        for channel in 0..<channels {
                            for position in 0..<count { line[position] = values[at(index, position) + channel] }
                            body(line, output, count)
                            for position in 0..<count { values[at(index, position) + channel] = output[position] }
                        }
                    }
                }
            }
        }
    }
}
