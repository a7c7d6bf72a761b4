import CImageKernels

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
/// Pixels are held as `P`: `Float` for gray, `SIMD4<Float>` for everything else, so every
/// filter tap is one (vector) multiply-add instead of one scalar per channel. Colour is
/// resampled with premultiplied alpha, so transparent pixels do not bleed their (invisible)
/// colour into the edges of opaque ones.
struct StreamingResampler<P: ResamplePixel> {
    private let format: PixelFormat
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
    /// The horizontal taps, each repeated across a pixel's lanes: a tap is then one load and a
    /// multiply, where a `Float` tap also had to be broadcast (4% of the pass).
    private let horizontalTaps: ChargedArray<P>
    /// Current source row as vectors (premultiplied when there is alpha).
    private var sourcePixels: ChargedArray<P>
    /// Sums of the current row of k×k blocks.
    private var boxSums: ChargedArray<P>
    private var rowsInBox = 0
    private var sourceRowsSeen = 0
    /// Pixels from one ring row to the next: the row and one cache line more. At widths whose
    /// rows are a multiple of 4 KiB (512 colour pixels) every row would map to the same L1
    /// cache sets, and the vertical pass, which reads all of its taps' rows at once, thrashed.
    private let ringStride: Int
    /// `ringRows` horizontally resampled rows; source row r lives in slot r % ringRows.
    private var ring: ChargedArray<P>
    private var accumulator: ChargedArray<P>
    /// Where each vertical tap's row starts in the ring (in floats), for the row being produced.
    private var tapOffsets: ChargedArray<Int>
    private var output: ChargedArray<UInt8>?
    private var rowsConsumed = 0
    private var rowsProduced = 0

    /// Resamples the `crop` of `sourceWidth × sourceHeight` rows (by default all of them) to
    /// `targetWidth × targetHeight`.
    init(
        sourceWidth: Int, sourceHeight: Int, crop: PixelRect? = nil, targetWidth: Int, targetHeight: Int, format: PixelFormat,
        boxPreReduction: Bool = true
    ) throws(ImageCodecError) {
        self.format = format
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        let crop = crop ?? PixelRect(width: sourceWidth, height: sourceHeight)
        box = Self.box(crop: crop, targetWidth: targetWidth, targetHeight: targetHeight, enabled: boxPreReduction)
        boxedWidth = (sourceWidth + box - 1) / box
        let boxedHeight = (sourceHeight + box - 1) / box
        // In block units, the crop keeps its place: a block average is a sample at the block's centre.
        let boxed = crop.scaled(1 / Double(box), 1 / Double(box))
        let horizontal = try ResampleWeights(sourceSize: boxedWidth, targetSize: targetWidth, offset: boxed.x, length: boxed.width)
        self.horizontal = horizontal
        vertical = try ResampleWeights(sourceSize: boxedHeight, targetSize: targetHeight, offset: boxed.y, length: boxed.height)
        ringRows = vertical.stride
        horizontalTaps = try ChargedArray(uninitializedCount: horizontal.weights.count) { taps in
            for (index, weight) in horizontal.weights.elements.enumerated() { taps[index] = P(repeating: weight) }
        }
        sourcePixels = try ChargedArray(repeating: P.zero, count: sourceWidth)
        boxSums = try ChargedArray(repeating: P.zero, count: box > 1 ? boxedWidth : 0)
        ringStride = Self.ringStride(targetWidth)
        ring = try ChargedArray(repeating: P.zero, count: ringRows * ringStride)
        accumulator = try ChargedArray(repeating: P.zero, count: targetWidth)
        tapOffsets = try ChargedArray(repeating: 0, count: ringRows)
        output = try ChargedArray(repeating: 0, count: targetWidth * targetHeight * format.channels)
    }

    /// Block size of the box pre-reduction: reductions of 4× and more average k×k blocks first,
    /// leaving at least 2× for Lanczos.
    private static func box(crop: PixelRect, targetWidth: Int, targetHeight: Int, enabled: Bool) -> Int {
        let reduction = min(crop.width / Double(targetWidth), crop.height / Double(targetHeight))
        return enabled ? max(1, Int(reduction / 2)) : 1
    }

    private static func ringStride(_ width: Int) -> Int { width + 64 / MemoryLayout<P>.stride }

    /// Bytes the resampler allocates for these sizes (its buffers and filter taps, the result
    /// included), for memory planning before a decode.
    static func plannedBytes(
        sourceWidth: Int, sourceHeight: Int, crop: PixelRect, targetWidth: Int, targetHeight: Int,
        format: PixelFormat
    ) -> Int {
        let box = box(crop: crop, targetWidth: targetWidth, targetHeight: targetHeight, enabled: true)
        let (boxedWidth, boxedHeight) = ((sourceWidth + box - 1) / box, (sourceHeight + box - 1) / box)
        let pixel = MemoryLayout<P>.stride
        let horizontalTaps = ResampleWeights.stride(length: crop.width / Double(box), samples: boxedWidth, targetSize: targetWidth)
        let ringRows = ResampleWeights.stride(length: crop.height / Double(box), samples: boxedHeight, targetSize: targetHeight)
        return (sourceWidth + (box > 1 ? boxedWidth : 0) + ringRows * ringStride(targetWidth) + targetWidth) * pixel
            + (targetWidth * horizontalTaps + targetHeight * ringRows) * MemoryLayout<Float>.stride
            + targetWidth * horizontalTaps * pixel
            + (2 * (targetWidth + targetHeight) + ringRows) * MemoryLayout<Int>.stride
            + targetWidth * targetHeight * format.channels
    }

    mutating func consume(_ row: UnsafePointer<UInt8>) {
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
            vertical.starts.elements[rowsProduced] + vertical.counts.elements[rowsProduced] <= rowsConsumed
        {
            produceRow(rowsProduced)
            rowsProduced += 1
        }
    }

    /// The output pixels, handed over (the resampler keeps none): a caller that converts them
    /// in place would otherwise copy the whole bitmap first.
    mutating func finish() throws(ImageCodecError) -> ChargedArray<UInt8> {
        guard rowsProduced == targetHeight, let pixels = output else {
            throw .corruptData("decoder delivered \(rowsConsumed) rows, fewer than the image height")
        }
        output = nil
        return pixels
    }

    // MARK: - Passes

    private mutating func loadSourceRow(_ row: UnsafePointer<UInt8>) {
        let (width, format) = (sourceWidth, format)
        sourcePixels.elements.withUnsafeMutableBufferPointer { P.load(row, width: width, format: format, into: $0.baseAddress!) }
    }

    /// Floats in a pixel: 1 for gray, 4 for colour.
    private static var lanes: Int { MemoryLayout<P>.stride / MemoryLayout<Float>.stride }

    /// Adds the current source row into the block sums, in `iec_box_accumulate` (CImageKernels):
    /// the same adds in the same order as a loop here, without its per-block range checks (5%
    /// of a 16-bit 5K PNG's thumbnail).
    private mutating func accumulateBox() {
        let (box, width) = (box, sourceWidth)
        boxSums.elements.withUnsafeMutableBytes { sums in
            sourcePixels.elements.withUnsafeBytes { pixels in
                iec_box_accumulate(
                    pixels.baseAddress!.assumingMemoryBound(to: Float.self), width, Self.lanes, box,
                    sums.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        rowsInBox += 1
    }

    /// Turns the block sums into averages (edge blocks may be partial) in `sourcePixels`, and
    /// clears the sums (`iec_box_average`).
    private mutating func finishBoxRow() {
        let (box, width, rows) = (box, sourceWidth, rowsInBox)
        boxSums.elements.withUnsafeMutableBytes { sums in
            sourcePixels.elements.withUnsafeMutableBytes { pixels in
                iec_box_average(
                    sums.baseAddress!.assumingMemoryBound(to: Float.self), width, Self.lanes, box, rows,
                    pixels.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        rowsInBox = 0
    }

    /// Lanczos over the (possibly block-averaged) row in `sourcePixels`, into a ring slot, in
    /// `iec_resample_horizontal4`/`1` (CImageKernels): each output pixel the tap-order sum of its
    /// taps, AVX2 where the CPU has it for colour, the same bytes everywhere.
    private mutating func resampleHorizontally(intoSlot slot: Int) {
        let (stride, width, ringStride) = (horizontal.stride, targetWidth, ringStride)
        ring.elements.withUnsafeMutableBufferPointer { ring in
            sourcePixels.elements.withUnsafeBufferPointer { source in
                horizontalTaps.elements.withUnsafeBufferPointer { taps in
                    horizontal.starts.elements.withUnsafeBufferPointer { starts in
                        horizontal.counts.elements.withUnsafeBufferPointer { counts in
                            P.resampleRow(
                                source.baseAddress!, taps: taps.baseAddress!, starts: starts.baseAddress!, counts: counts.baseAddress!,
                                stride: stride, into: ring.baseAddress! + slot * ringStride, width: width)
                        }
                    }
                }
            }
        }
    }

    /// Vertical pass for one output row, from the rows in the ring, then conversion to 8 bits.
    ///
    /// The pass does not care which channel a float is, so it runs over each row as plain floats
    /// in `iec_resample_vertical` (CImageKernels): AVX2 where the CPU has it, a portable twin
    /// elsewhere, the same bytes from both (each product rounded, then added, in tap order).
    private mutating func produceRow(_ y: Int) {
        let (width, ringRows, format) = (targetWidth, ringRows, format)
        let first = vertical.starts.elements[y]
        let (tapBase, taps) = (y * vertical.stride, vertical.counts.elements[y])
        let (floats, rowFloats) = (width * Self.lanes, ringStride * Self.lanes)
        accumulator.elements.withUnsafeMutableBytes { sumBytes in
            ring.elements.withUnsafeBytes { ringBytes in
                tapOffsets.elements.withUnsafeMutableBufferPointer { tapOffsets in
                    vertical.weights.elements.withUnsafeBufferPointer { weights in
                        // Each tap's row, found once per output row: a `%` per tap per chunk cost
                        // more than the multiply-adds.
                        for tap in 0..<taps { tapOffsets[tap] = ((first + tap) % ringRows) * rowFloats }
                        iec_resample_vertical(
                            ringBytes.baseAddress!.assumingMemoryBound(to: Float.self), tapOffsets.baseAddress!,
                            weights.baseAddress! + tapBase, Int32(taps), sumBytes.baseAddress!.assumingMemoryBound(to: Float.self), floats)
                    }
                }
            }
        }
        let channels = format.channels
        accumulator.elements.withUnsafeBufferPointer { sum in
            output?.elements.withUnsafeMutableBufferPointer { output in
                P.store(sum.baseAddress!, width: width, format: format, to: output.baseAddress! + y * width * channels)
            }
        }
    }
}

/// `RowSink`s around the resampler. They are concrete classes holding a concrete
/// `StreamingResampler<P>`, so the optimiser specialises every pass for `Float` or
/// `SIMD4<Float>`; a generic class called through the protocol stayed unspecialised and
/// ran three times slower.
final class GrayResamplingSink: RowSink {
    private var resampler: StreamingResampler<Float>

    init(source: (width: Int, height: Int), crop: PixelRect, target: (width: Int, height: Int), boxPreReduction: Bool) throws(ImageCodecError) {
        resampler = try StreamingResampler(
            sourceWidth: source.width, sourceHeight: source.height, crop: crop,
            targetWidth: target.width, targetHeight: target.height, format: .gray,
            boxPreReduction: boxPreReduction)
    }

    func consume(_ row: UnsafePointer<UInt8>) { resampler.consume(row) }
    func finish() throws(ImageCodecError) -> ChargedArray<UInt8> { try resampler.finish() }
}

final class ColorResamplingSink: RowSink {
    private var resampler: StreamingResampler<SIMD4<Float>>

    init(
        source: (width: Int, height: Int), crop: PixelRect, target: (width: Int, height: Int), format: PixelFormat,
        boxPreReduction: Bool
    ) throws(ImageCodecError) {
        resampler = try StreamingResampler(
            sourceWidth: source.width, sourceHeight: source.height, crop: crop,
            targetWidth: target.width, targetHeight: target.height, format: format,
            boxPreReduction: boxPreReduction)
    }

    func consume(_ row: UnsafePointer<UInt8>) { resampler.consume(row) }
    func finish() throws(ImageCodecError) -> ChargedArray<UInt8> { try resampler.finish() }
}
