/// Separable Lanczos-3 resampler that takes source rows one at a time, top to bottom.
///
/// Each incoming row is resampled horizontally into a small ring of rows; as soon as the ring
/// holds every row an output row needs, that row is produced. Memory is therefore proportional
/// to the output (ring + result), never to the source, which is what lets a decoder stream a
/// 12 MP JPEG into a 1080 px thumbnail without holding the 12 MP.
///
/// Colour is resampled with premultiplied alpha, so transparent pixels do not bleed their
/// (invisible) colour into the edges of opaque ones.
final class StreamingResampler: RowSink {
    private let channels: Int
    private let hasAlpha: Bool
    private let sourceWidth: Int
    private let targetWidth: Int
    private let targetHeight: Int
    private let horizontal: ResampleWeights
    private let vertical: ResampleWeights
    private let ringRows: Int
    /// Current source row, converted to Float (and premultiplied when there is alpha).
    private var sourceFloats: [Float]
    /// `ringRows` horizontally resampled rows; source row r lives in slot r % ringRows.
    private var ring: [Float]
    private var accumulator: [Float]
    private var output: [UInt8]
    private var rowsConsumed = 0
    private var rowsProduced = 0

    init(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, format: PixelFormat) {
        channels = format.channels
        hasAlpha = format.hasAlpha
        self.sourceWidth = sourceWidth
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        horizontal = ResampleWeights(sourceSize: sourceWidth, targetSize: targetWidth)
        vertical = ResampleWeights(sourceSize: sourceHeight, targetSize: targetHeight)
        ringRows = vertical.stride
        sourceFloats = [Float](repeating: 0, count: sourceWidth * channels)
        ring = [Float](repeating: 0, count: ringRows * targetWidth * channels)
        accumulator = [Float](repeating: 0, count: targetWidth * channels)
        output = [UInt8](repeating: 0, count: targetWidth * targetHeight * channels)
    }

    func consume(_ row: UnsafePointer<UInt8>) {
        guard rowsProduced < targetHeight else { return }
        loadSourceRow(row)
        let rowLength = targetWidth * channels
        let slot = (rowsConsumed % ringRows) * rowLength
        ring.withUnsafeMutableBufferPointer { ring in
            sourceFloats.withUnsafeBufferPointer { source in
                let destination = ring.baseAddress! + slot
                switch channels {
                case 1: resampleRow(Channels1.self, source.baseAddress!, destination)
                case 2: resampleRow(Channels2.self, source.baseAddress!, destination)
                case 3: resampleRow(Channels3.self, source.baseAddress!, destination)
                default: resampleRow(Channels4.self, source.baseAddress!, destination)
                }
            }
        }
        rowsConsumed += 1
        while rowsProduced < targetHeight,
              vertical.starts[rowsProduced] + vertical.counts[rowsProduced] <= rowsConsumed {
            produceRow(rowsProduced)
            rowsProduced += 1
        }
    }

    func finish() throws(ImageCodecError) -> [UInt8] {
        guard rowsProduced == targetHeight else {
            throw .corruptData("decoder delivered \(rowsConsumed) rows, fewer than the image height")
        }
        return output
    }

    // MARK: - Passes

    private func loadSourceRow(_ row: UnsafePointer<UInt8>) {
        let count = sourceWidth * channels
        sourceFloats.withUnsafeMutableBufferPointer { floats in
            for index in 0..<count { floats[index] = Float(row[index]) }
            guard hasAlpha else { return }
            let alphaIndex = channels - 1
            var pixel = 0
            while pixel < count {
                let alpha = floats[pixel + alphaIndex] * (1 / 255)
                for channel in 0..<alphaIndex { floats[pixel + channel] *= alpha }
                pixel += channels
            }
        }
    }

    /// Horizontal pass, specialised per channel count so the inner loops unroll.
    @inline(__always)
    private func resampleRow<C: ChannelCount>(_: C.Type, _ source: UnsafePointer<Float>,
                                              _ destination: UnsafeMutablePointer<Float>) {
        horizontal.weights.withUnsafeBufferPointer { weights in
            horizontal.starts.withUnsafeBufferPointer { starts in
                horizontal.counts.withUnsafeBufferPointer { counts in
                    let stride = horizontal.stride
                    for x in 0..<targetWidth {
                        var sum = SIMD4<Float>()
                        let taps = weights.baseAddress! + x * stride
                        var pixel = source + starts[x] * C.count
                        for tap in 0..<counts[x] {
                            let weight = taps[tap]
                            sum[0] += weight * pixel[0]
                            if C.count > 1 { sum[1] += weight * pixel[1] }
                            if C.count > 2 { sum[2] += weight * pixel[2] }
                            if C.count > 3 { sum[3] += weight * pixel[3] }
                            pixel += C.count
                        }
                        let out = destination + x * C.count
                        for channel in 0..<C.count { out[channel] = sum[channel] }
                    }
                }
            }
        }
    }

    /// Vertical pass for one output row, from the rows in the ring, then conversion to 8 bits.
    private func produceRow(_ y: Int) {
        let rowLength = targetWidth * channels
        let first = vertical.starts[y]
        let count = vertical.counts[y]
        let tapBase = y * vertical.stride
        accumulator.withUnsafeMutableBufferPointer { sum in
            ring.withUnsafeBufferPointer { ring in
                vertical.weights.withUnsafeBufferPointer { weights in
                    for index in 0..<rowLength { sum[index] = 0 }
                    for tap in 0..<count {
                        let weight = weights[tapBase + tap]
                        let row = ring.baseAddress! + ((first + tap) % ringRows) * rowLength
                        for index in 0..<rowLength { sum[index] += weight * row[index] }
                    }
                }
            }
            output.withUnsafeMutableBufferPointer { output in
                let out = output.baseAddress! + y * rowLength
                if hasAlpha {
                    storeUnpremultiplied(sum.baseAddress!, out, rowLength)
                } else {
                    for index in 0..<rowLength { out[index] = Self.clampToByte(sum[index]) }
                }
            }
        }
    }

    private func storeUnpremultiplied(_ sum: UnsafeMutablePointer<Float>, _ out: UnsafeMutablePointer<UInt8>,
                                      _ rowLength: Int) {
        let alphaIndex = channels - 1
        var pixel = 0
        while pixel < rowLength {
            let alpha = sum[pixel + alphaIndex]
            let alphaByte = Self.clampToByte(alpha)
            out[pixel + alphaIndex] = alphaByte
            let scale: Float = alphaByte == 0 ? 0 : 255 / alpha
            for channel in 0..<alphaIndex { out[pixel + channel] = Self.clampToByte(sum[pixel + channel] * scale) }
            pixel += channels
        }
    }

    @inline(__always)
    static func clampToByte(_ value: Float) -> UInt8 {
        // Lanczos lobes overshoot; clamp before converting. NaN cannot occur (finite inputs).
        UInt8(min(max(value + 0.5, 0), 255))
    }
}

/// Compile-time channel counts for specialising the horizontal pass.
protocol ChannelCount { static var count: Int { get } }
enum Channels1: ChannelCount { static var count: Int { 1 } }
enum Channels2: ChannelCount { static var count: Int { 2 } }
enum Channels3: ChannelCount { static var count: Int { 3 } }
enum Channels4: ChannelCount { static var count: Int { 4 } }
