import CImageCodecShim

/// GIF header probe and decode: the block walk is `GIFContainer`'s, each frame's LZW data is
/// giflib's (handed one frame at a time), palettes, transparency, interlacing and disposal are
/// composited here on an ``AnimationCanvas``. A still decode is the first frame on the logical
/// screen, as browsers show it: transparent where the frame does not reach.
///
/// Memory: the canvas (4 bytes a pixel), one frame row of indices, and, for a frame that asks
/// to be undone, a copy of what it covers; giflib's own state is a few tens of KiB (its LZW
/// tables). The screen and every frame are checked against the limits before any of it is
/// allocated.
enum GIFDecoder {
    struct Layout: Sendable, Hashable {
        var container: GIFContainer
    }

    /// giflib's state: the decoder, its LZW tables and stack.
    static let libraryBytes = 64 << 10

    static func open(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) -> (ImageHeader, Layout) {
        let container = try GIFContainer(bytes)
        try limits.check(width: container.screenWidth, height: container.screenHeight)
        let first = container.firstFrame
        let coversScreen =
            first.x == 0 && first.y == 0 && first.width >= container.screenWidth && first.height >= container.screenHeight
        let header = ImageHeader(
            format: .gif, width: container.screenWidth, height: container.screenHeight, orientation: .up,
            hasAlpha: first.transparentIndex != nil || !coversScreen, bitDepth: 8,
            colorModel: .palette, progressive: first.interlaced, frameCount: container.frameCount)
        return (header, Layout(container: container))
    }

    static func plan(_ header: ImageHeader, _ layout: Layout, heldBytes: Int, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let plan = try options.storedPlan(for: header)
        let format: PixelFormat = header.hasAlpha ? .rgba : .rgb
        let window = RowWindow(rowWidth: header.width, rowCount: header.height, crop: plan.crop)
        let canvas = header.width * header.height * 4
        let row = layout.container.firstFrame.width + header.width * format.channels
        let sink = RowSinks.plannedBytes(window: window, target: (plan.width, plan.height), format: format)
        return DecodePlan(
            header: header, plan: plan, scaleNumerator: 8, decodeBytes: heldBytes + libraryBytes + canvas + row + sink,
            channels: format.channels, options: options)
    }

    /// The first frame, composited and then cropped and resized as `options` say.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, _ header: ImageHeader, _ layout: Layout, options: DecodingOptions
    ) throws(ImageCodecError) -> DecodedImage {
        var canvas = try AnimationCanvas(width: header.width, height: header.height)
        try draw(layout.container.firstFrame, of: layout.container, bytes, on: &canvas, limits: options.limits)
        let format: PixelFormat = header.hasAlpha ? .rgba : .rgb
        return DecodedImage(bitmap: try canvas.rendered(header, format: format, options: options), header: header)
    }

    /// Composites `frame` on `canvas` (after disposing of the previous frame): its LZW data
    /// decoded by giflib a row at a time, each row placed (interlaced frames: by pass) and
    /// drawn through the frame's palette.
    static func draw(
        _ frame: GIFFrame, of container: GIFContainer, _ bytes: UnsafeRawBufferPointer, on canvas: inout AnimationCanvas,
        limits: DecodingLimits
    ) throws(ImageCodecError) {
        let area = canvas.area(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
        try canvas.begin(area, disposal: frame.disposal)
        // A frame of no pixels draws nothing (and keeps its time).
        guard frame.width > 0, frame.height > 0 else { return }
        try limits.check(width: frame.width, height: frame.height)
        guard let table = frame.palette ?? container.globalPalette else {
            throw .corruptData("a frame with neither a local nor a global colour table")
        }
        var palette = [SIMD4<UInt8>](repeating: SIMD4(0, 0, 0, 255), count: 256) // small: 1 KiB
        for entry in 0..<(table.count / 3) {
            let at = table.lowerBound + 3 * entry
            palette[entry] = SIMD4(bytes[at], bytes[at + 1], bytes[at + 2], 255)
        }
        var row = try ChargedArray<UInt8>(repeating: 0, count: frame.width)
        var message = ShimMessage.buffer()
        let data = UnsafeRawBufferPointer(rebasing: bytes[frame.data])
        guard
            let decoder = iec_gif_frame_open(
                data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, Int32(frame.width), Int32(frame.height), 1,
                &message)
        else { throw .corruptData(message.shimMessage) }
        defer { iec_gif_frame_close(decoder) }
        var checkpoint = CancellationCheckpoint()
        var rows = InterlacedRows(height: frame.height, interlaced: frame.interlaced)
        for _ in 0..<frame.height {
            try checkpoint.advance(by: frame.width)
            let status = row.elements.withUnsafeMutableBufferPointer { iec_gif_frame_row(decoder, $0.baseAddress, &message) }
            guard status == IEC_OK else { throw ImageCodecError(shimStatus: status, message: message.shimMessage) }
            let y = frame.y + rows.next()
            row.elements.withUnsafeBufferPointer { indices in
                palette.withUnsafeBufferPointer { palette in
                    canvas.drawIndices(indices, x: frame.x, y: y, palette: palette, transparent: frame.transparentIndex)
                }
            }
        }
        let status = iec_gif_frame_finish(decoder, &message)
        guard status == IEC_OK else { throw .limitExceeded(message.shimMessage) }
    }
}

/// The row each of a frame's stored rows goes to: in order, or, interlaced, by GIF's four
/// passes (every 8th row from 0, every 8th from 4, every 4th from 2, every 2nd from 1).
struct InterlacedRows {
    private let height: Int
    private let interlaced: Bool
    private var pass = 0
    private var row = 0

    init(height: Int, interlaced: Bool) {
        (self.height, self.interlaced) = (height, interlaced)
    }

    private static let starts = [0, 4, 2, 1]
    private static let steps = [8, 8, 4, 2]

    /// The next stored row's place in the frame.
    mutating func next() -> Int {
        guard interlaced else {
            defer { row += 1 }
            return row
        }
        while pass < 4 && Self.starts[pass] + row * Self.steps[pass] >= height {
            pass += 1
            row = 0
        }
        guard pass < 4 else { return height }
        defer { row += 1 }
        return Self.starts[pass] + row * Self.steps[pass]
    }
}

extension ImageCodecError {
    /// A giflib status as the codec's error.
    init(shimStatus status: iec_status, message: String) {
        self = status == IEC_TRUNCATED ? .truncatedData : .corruptData(message)
    }
}

extension AnimationCanvas {
    /// The canvas as `options` ask for it: cropped and resized through the decoders' row sinks,
    /// in `format` (RGB drops the alpha channel of a canvas that has none).
    func rendered(_ header: ImageHeader, format: PixelFormat, options: DecodingOptions) throws(ImageCodecError) -> Bitmap {
        let plan = try options.storedPlan(for: header)
        let window = RowWindow(rowWidth: width, rowCount: height, crop: plan.crop)
        let colorPlan = ColorPlan.make(profile: nil, layout: ColorLayout(format), management: options.colorManagement)
        let sink = try RowSinks.make(
            window: window, inputChannels: format.channels, target: (plan.width, plan.height), format: format,
            boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        var checkpoint = CancellationCheckpoint()
        var row = try ChargedArray<UInt8>(repeating: 0, count: format == .rgba ? 0 : width * format.channels)
        try pixels.elements.withUnsafeBufferPointer { (canvas) throws(ImageCodecError) in
            for y in 0..<height {
                try checkpoint.advance(by: width)
                let source = canvas.baseAddress! + y * width * 4
                guard format != .rgba else {
                    sink.consume(source)
                    continue
                }
                row.elements.withUnsafeMutableBufferPointer { row in
                    for x in 0..<width { (row[3 * x], row[3 * x + 1], row[3 * x + 2]) = (source[4 * x], source[4 * x + 1], source[4 * x + 2]) }
                    sink.consume(row.baseAddress!)
                }
            }
        }
        let bitmap = Bitmap(unchecked: plan.width, height: plan.height, format: format, pixels: try sink.finish())
        return options.appliesOrientation ? try bitmap.applying(header.orientation) : bitmap
    }
}
