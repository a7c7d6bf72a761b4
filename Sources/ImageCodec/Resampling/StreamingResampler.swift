/// Separable Lanczos-3 resampler that takes source rows one at a time, top to bottom.
///
/// Each incoming row is resampled horizontally into a small ring of rows; as soon as the ring
/// holds every row an output row needs, that row is produced. Memory is therefore proportional
/// to the output (ring + result), never to the source, which is what lets a decoder stream a
/// 12 MP JPEG into a 1080 px thumbnail without holding the 12 MP.
///
/// Large reductions (4× and more) first average k×k blocks while rows stream in, leaving at
/// least 2× for Lanczos, as libvips does: the block average removes most of the work, and
/// Lanczos over the last factor of two still does the antialiasing that matters.
///
/// Pixels are held as `SIMD4<Float>` whatever the channel count, so every filter tap is one
/// vector multiply-add instead of one scalar per channel. Colour is resampled with
/// premultiplied alpha, so transparent pixels do not bleed their (invisible) colour into the
/// edges of opaque ones.
final class StreamingResampler: RowSink {
    private let channels: Int
    private let hasAlpha: Bool
    private let sourceWidth: Int
    private let sourceHeight: Int
    /// Block size of the box pre-reduction (1 = none).
    private let box: Int
    private let boxedWidth: Int
    private let targetWidth: Int
    private let targetHeight: Int
    private let horizontal: ResampleWeights
    private let vertical: ResampleWeights
    private let ringRows: Int
    /// Current source row as vectors (premultiplied when there is alpha).
    private var sourcePixels: [SIMD4<Float>]
    /// Sums of the current row of k×k blocks.
    private var boxSums: [SIMD4<Float>]
    private var rowsInBox = 0
    private var sourceRowsSeen = 0
    /// `ringRows` horizontally resampled rows; source row r lives in slot r % ringRows.
    private var ring: [SIMD4<Float>]
    private var accumulator: [SIMD4<Float>]
    private var output: [UInt8]
    private var rowsConsumed = 0
    private var rowsProduced = 0

    init(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, format: PixelFormat) {
        channels = format.channels
        hasAlpha = format.hasAlpha
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        let reduction = min(Double(sourceWidth) / Double(targetWidth), Double(sourceHeight) / Double(targetHeight))
        box = max(1, Int(reduction / 2))
        boxedWidth = (sourceWidth + box - 1) / box
        let boxedHeight = (sourceHeight + box - 1) / box
        horizontal = ResampleWeights(sourceSize: boxedWidth, targetSize: targetWidth)
        vertical = ResampleWeights(sourceSize: boxedHeight, targetSize: targetHeight)
        ringRows = vertical.stride
        sourcePixels = [SIMD4<Float>](repeating: .zero, count: sourceWidth)
        boxSums = [SIMD4<Float>](repeating: .zero, count: box > 1 ? boxedWidth : 0)
        ring = [SIMD4<Float>](repeating: .zero, count: ringRows * targetWidth)
        accumulator = [SIMD4<Float>](repeating: .zero, count: targetWidth)
        output = [UInt8](repeating: 0, count: targetWidth * targetHeight * format.channels)
    }

    func consume(_ row: UnsafePointer<UInt8>) {
        guard rowsProduced < targetHeight, sourceRowsSeen < sourceHeight else { return }
        loadSourceRow(row)
        sourceRowsSeen += 1
        if box > 1 {
            accumulateBox()
            guard rowsInBox == box || sourceRowsSeen == sourceHeight else { return }
            finishBoxRow()
        }
        resampleHorizontally(intoSlot: rowsConsumed % ringRows)
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

    /// Bytes → vectors. Gray goes in lane 0 and its alpha in lane 3, so alpha is always lane 3.
    private func loadSourceRow(_ row: UnsafePointer<UInt8>) {
        let width = sourceWidth
        sourcePixels.withUnsafeMutableBufferPointer { pixels in
            switch channels {
            case 1:
                for x in 0..<width { pixels[x] = SIMD4(Float(row[x]), 0, 0, 0) }
            case 2:
                for x in 0..<width {
                    let alpha = Float(row[2 * x + 1])
                    pixels[x] = SIMD4(Float(row[2 * x]) * alpha * (1 / 255), 0, 0, alpha)
                }
            case 3:
                // Four bytes at a time (lane 3 is the next pixel's red and is never used);
                // the last pixel is read bytewise so the row is not overrun.
                let raw = UnsafeRawPointer(row)
                for x in 0..<(width - 1) {
                    pixels[x] = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: 3 * x, as: SIMD4<UInt8>.self))
                }
                let last = 3 * (width - 1)
                pixels[width - 1] = SIMD4(Float(row[last]), Float(row[last + 1]), Float(row[last + 2]), 0)
            default:
                let raw = UnsafeRawPointer(row)
                for x in 0..<width {
                    let pixel = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: 4 * x, as: SIMD4<UInt8>.self))
                    let alpha = pixel[3] * (1 / 255)
                    pixels[x] = pixel * SIMD4(alpha, alpha, alpha, 1)
                }
            }
        }
    }

    /// Adds the current source row into the block sums.
    private func accumulateBox() {
        let (box, width, boxedWidth) = (box, sourceWidth, boxedWidth)
        boxSums.withUnsafeMutableBufferPointer { sums in
            sourcePixels.withUnsafeBufferPointer { pixels in
                for block in 0..<boxedWidth {
                    var sum = sums[block]
                    for x in (block * box)..<min(width, block * box + box) { sum += pixels[x] }
                    sums[block] = sum
                }
            }
        }
        rowsInBox += 1
    }

    /// Turns the block sums into averages (edge blocks may be partial) in `sourcePixels`.
    private func finishBoxRow() {
        let (box, width, rows) = (box, sourceWidth, Float(rowsInBox))
        boxSums.withUnsafeMutableBufferPointer { sums in
            sourcePixels.withUnsafeMutableBufferPointer { pixels in
                for block in 0..<sums.count {
                    let columns = Float(min(width, block * box + box) - block * box)
                    pixels[block] = sums[block] / (columns * rows)
                    sums[block] = .zero
                }
            }
        }
        rowsInBox = 0
    }

    /// Lanczos over the (possibly block-averaged) row in `sourcePixels`, into a ring slot.
    private func resampleHorizontally(intoSlot slot: Int) {
        let stride = horizontal.stride
        let width = targetWidth
        ring.withUnsafeMutableBufferPointer { ring in
            sourcePixels.withUnsafeBufferPointer { source in
                horizontal.weights.withUnsafeBufferPointer { weights in
                    horizontal.starts.withUnsafeBufferPointer { starts in
                        horizontal.counts.withUnsafeBufferPointer { counts in
                            let destination = ring.baseAddress! + slot * width
                            for x in 0..<width {
                                let taps = weights.baseAddress! + x * stride
                                let pixels = source.baseAddress! + starts[x]
                                var sum = SIMD4<Float>.zero
                                for tap in 0..<counts[x] { sum += taps[tap] * pixels[tap] }
                                destination[x] = sum
                            }
                        }
                    }
                }
            }
        }
    }

    /// Vertical pass for one output row, from the rows in the ring, then conversion to 8 bits.
    /// Taps are the outer loop so every pass walks rows sequentially.
    private func produceRow(_ y: Int) {
        let width = targetWidth
        let first = vertical.starts[y]
        let tapBase = y * vertical.stride
        let channels = channels
        let hasAlpha = hasAlpha
        accumulator.withUnsafeMutableBufferPointer { sum in
            ring.withUnsafeBufferPointer { ring in
                vertical.weights.withUnsafeBufferPointer { weights in
                    for x in 0..<width { sum[x] = .zero }
                    for tap in 0..<vertical.counts[y] {
                        let weight = weights[tapBase + tap]
                        let row = ring.baseAddress! + ((first + tap) % ringRows) * width
                        for x in 0..<width { sum[x] += weight * row[x] }
                    }
                }
            }
            output.withUnsafeMutableBufferPointer { output in
                var out = output.baseAddress! + y * width * channels
                for x in 0..<width {
                    Self.store(sum[x], channels: channels, hasAlpha: hasAlpha, to: out)
                    out += channels
                }
            }
        }
    }

    /// Vector → bytes, undoing premultiplication. Lanczos lobes overshoot, so values are
    /// clamped to 0...255 before rounding.
    @inline(__always)
    private static func store(_ value: SIMD4<Float>, channels: Int, hasAlpha: Bool, to out: UnsafeMutablePointer<UInt8>) {
        var pixel = value
        if hasAlpha {
            let alpha = pixel[3].rounded()
            let scale: Float = alpha <= 0 ? 0 : 255 / pixel[3]
            pixel *= SIMD4(scale, scale, scale, 1)
        }
        let clamped = (pixel + 0.5).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 255))
        switch channels {
        case 1:
            out[0] = UInt8(clamped[0])
        case 2:
            out[0] = UInt8(clamped[0])
            out[1] = UInt8(clamped[3])
        case 3:
            out[0] = UInt8(clamped[0]); out[1] = UInt8(clamped[1]); out[2] = UInt8(clamped[2])
        default:
            out[0] = UInt8(clamped[0]); out[1] = UInt8(clamped[1]); out[2] = UInt8(clamped[2]); out[3] = UInt8(clamped[3])
        }
    }
}
