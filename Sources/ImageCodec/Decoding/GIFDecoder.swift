import CImageCodecShim

/// GIF header probe and decode: the block walk is `GIFContainer`'s, each frame's LZW data is
/// giflib's (handed one frame at a time, through `GIFFrameRows`), palettes, transparency,
/// interlacing and disposal are applied here. A still decode is the first frame on the logical
/// screen, as browsers show it: transparent where the frame does not reach.
///
/// Memory of a still decode: a row of the screen and a row of indices, streamed into the
/// resampler as they are made (no canvas); an interlaced frame, whose rows arrive by pass, also
/// holds its indices (1 byte a pixel) until its last pass. Animations composite on an
/// ``AnimationCanvas`` (4 bytes a pixel). giflib's own state is a few tens of KiB (its LZW
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
        let first = layout.container.firstFrame
        let held = first.interlaced ? first.width * first.height : 0
        let row = first.width + header.width * format.channels
        let sink = RowSinks.plannedBytes(window: window, target: (plan.width, plan.height), format: format)
        return DecodePlan(
            header: header, plan: plan, scaleNumerator: 8, decodeBytes: heldBytes + libraryBytes + held + row + sink,
            channels: format.channels, options: options)
    }

    /// The first frame on a transparent screen, streamed a row at a time into the sink that
    /// crops and resizes it as `options` say: the pixels a canvas would hold, without the canvas.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, _ header: ImageHeader, _ layout: Layout, options: DecodingOptions
    ) throws(ImageCodecError) -> DecodedImage {
        let format: PixelFormat = header.hasAlpha ? .rgba : .rgb
        let frame = layout.container.firstFrame
        var rows = try StillFrameRows(frame, of: layout.container, bytes, limits: options.limits)
        let (channels, palette) = (format.channels, rows.palette)
        // Outside the frame the screen is transparent (black): only an RGBA screen has such pixels.
        var line = try ChargedArray<UInt8>(repeating: 0, count: header.width * channels)
        let columns = min(frame.x, header.width)..<min(frame.x + frame.width, header.width)
        let bitmap = try resampled(header, format: format, options: options) { (sink) throws(ImageCodecError) in
            var checkpoint = CancellationCheckpoint()
            for y in 0..<header.height {
                try checkpoint.advance(by: header.width)
                try rows.withIndices(forScreenRow: y) { indices in
                    line.elements.withUnsafeMutableBufferPointer { line in
                        if let indices, let palette {
                            let transparent = frame.transparentIndex ?? -1
                            for column in columns {
                                let index = Int(indices[column - frame.x])
                                let at = column * channels
                                guard index != transparent else {
                                    for channel in 0..<channels { line[at + channel] = 0 }
                                    continue
                                }
                                let colour = palette[index]
                                for channel in 0..<channels { line[at + channel] = colour[channel] }
                            }
                        } else {
                            for at in (columns.lowerBound * channels)..<(columns.upperBound * channels) { line[at] = 0 }
                        }
                        sink.consume(line.baseAddress!)
                    }
                }
            }
            try rows.finish()
        }
        return DecodedImage(bitmap: bitmap, header: header)
    }

    /// A screen of `header`'s size in `format`, its rows handed by `rows` to the sink that
    /// crops and resizes it as `options` say, then turned upright: what the still decode and the
    /// animation canvas both make of their rows.
    static func resampled(
        _ header: ImageHeader, format: PixelFormat, options: DecodingOptions, rows: (any RowSink) throws(ImageCodecError) -> Void
    ) throws(ImageCodecError) -> Bitmap {
        let plan = try options.storedPlan(for: header)
        let window = RowWindow(rowWidth: header.width, rowCount: header.height, crop: plan.crop)
        let colorPlan = ColorPlan.make(profile: nil, layout: ColorLayout(format), management: options.colorManagement)
        let sink = try RowSinks.make(
            window: window, inputChannels: format.channels, target: (plan.width, plan.height), format: format,
            boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        try rows(sink)
        let bitmap = Bitmap(unchecked: plan.width, height: plan.height, format: format, pixels: try sink.finish())
        return options.appliesOrientation ? try bitmap.applying(header.orientation) : bitmap
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
        let rows = try GIFFrameRows(frame, of: container, bytes)
        var checkpoint = CancellationCheckpoint()
        for _ in 0..<frame.height {
            try checkpoint.advance(by: frame.width)
            let y = frame.y + (try rows.next())
            rows.indices.elements.withUnsafeBufferPointer { indices in
                rows.palette.withUnsafeBufferPointer { palette in
                    canvas.drawIndices(indices, x: frame.x, y: y, palette: palette, transparent: frame.transparentIndex)
                }
            }
        }
        try rows.finish()
    }
}

/// The first frame's index rows in screen order, for the still decode: in order as giflib makes
/// them, or, for an interlaced frame, all of them decoded first into one plane of indices.
private struct StillFrameRows {
    let frame: GIFFrame
    private let rows: GIFFrameRows?
    /// An interlaced frame's indices, row by row.
    private var plane: ChargedArray<UInt8>?
    /// Frame rows decoded so far (in order).
    private var decoded = 0

    var palette: [SIMD4<UInt8>]? { rows?.palette }

    init(_ frame: GIFFrame, of container: GIFContainer, _ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) {
        self.frame = frame
        // A frame of no pixels draws nothing.
        guard frame.width > 0, frame.height > 0 else {
            rows = nil
            return
        }
        try limits.check(width: frame.width, height: frame.height)
        let rows = try GIFFrameRows(frame, of: container, bytes)
        self.rows = rows
        guard frame.interlaced else { return }
        var plane = try ChargedArray<UInt8>(repeating: 0, count: frame.width * frame.height)
        var checkpoint = CancellationCheckpoint()
        for _ in 0..<frame.height {
            try checkpoint.advance(by: frame.width)
            let y = try rows.next()
            rows.indices.elements.withUnsafeBufferPointer { row in
                plane.elements.withUnsafeMutableBufferPointer { plane in
                    (plane.baseAddress! + y * frame.width).update(from: row.baseAddress!, count: frame.width)
                }
            }
        }
        self.plane = plane
        decoded = frame.height
    }

    /// Calls `body` with the frame's indices for screen row `y` (asked for y = 0, 1, 2, …), or
    /// with nil where the frame does not reach.
    mutating func withIndices(
        forScreenRow y: Int, _ body: (UnsafeBufferPointer<UInt8>?) -> Void
    ) throws(ImageCodecError) {
        guard let rows, (frame.y..<(frame.y + frame.height)).contains(y) else { return body(nil) }
        let row = y - frame.y
        if let plane {
            let width = frame.width
            return plane.elements.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[(row * width)..<((row + 1) * width)])) }
        }
        while decoded <= row {
            _ = try rows.next()
            decoded += 1
        }
        rows.indices.elements.withUnsafeBufferPointer { body($0) }
    }

    /// Decodes the rows below the screen (the data must still end with the frame) and checks
    /// that nothing follows.
    mutating func finish() throws(ImageCodecError) {
        guard let rows else { return }
        var checkpoint = CancellationCheckpoint()
        while decoded < frame.height {
            try checkpoint.advance(by: frame.width)
            _ = try rows.next()
            decoded += 1
        }
        try rows.finish()
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
        var row = try ChargedArray<UInt8>(repeating: 0, count: format == .rgba ? 0 : width * format.channels)
        return try GIFDecoder.resampled(header, format: format, options: options) { (sink) throws(ImageCodecError) in
            var checkpoint = CancellationCheckpoint()
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
        }
    }
}
