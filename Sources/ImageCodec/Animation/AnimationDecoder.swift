import CImageCodecShim
import Foundation

/// One frame of an animation: the canvas as a browser shows it while the frame is up, then
/// cropped and resized as the decoder's options say.
public struct AnimationFrame: Sendable {
    /// Position in the animation, from 0.
    public var index: Int
    /// The composited canvas at the options' size, RGBA (a still image: its decode).
    public var bitmap: Bitmap
    /// How long the frame shows, in milliseconds. Browsers show a frame of 10 ms or less (a
    /// GIF's delay of 0 or 1 hundredths) for 100 ms, and so does this.
    public var durationMilliseconds: Int
}

/// The frames of an image, one at a time: each composited on the canvas as browsers show it
/// (GIF disposal and transparency, WebP blending and disposal; transparent where no frame has
/// drawn), then cropped and resized as `options` say. What a client that plays animations, or a
/// writer of animated WebP, reads. A still image of any format is one frame.
///
/// Frames are made as they are asked for and none is kept: memory is the canvas, one frame's
/// rows and one output bitmap, whatever the number of frames (see ``plannedBytes``).
///
/// ```swift
/// let source = try ImageSource(data: gif)
/// var frames = try AnimationDecoder(source: source, options: DecodingOptions(resize: .maxPixelSize(240)))
/// while let frame = try frames.next() {
///     show(frame.bitmap, for: .milliseconds(frame.durationMilliseconds))
/// }
/// ```
public struct AnimationDecoder: Sendable {
    /// The image.
    public let source: ImageSource
    /// How each frame is cropped and resized (a trim or a smart crop is resolved on the first
    /// frame and kept for all of them).
    public let options: DecodingOptions
    /// Frames this decoder gives: the file's, at most `maxFrames`, and only as many as fit in
    /// ``DecodingLimits/maxAnimationPixels`` of canvas pixels together (a truncated GIF: the
    /// whole frames before the cut).
    public let frameCount: Int
    /// How many times the animation plays: 0 forever, 1 once (a GIF without a loop extension;
    /// a GIF's NETSCAPE2.0 count N plays N + 1 times, as in browsers).
    public let plays: Int
    /// Bytes the decoder holds at most while it makes a frame (the canvas, a frame's rows or
    /// pixels, the resampler, the output bitmap): what a caller admits, as it does a
    /// ``DecodePlan``'s.
    public let plannedBytes: Int
    /// What the decoder left out and why: the frames past ``DecodingLimits/maxAnimationPixels``,
    /// or a GIF cut inside a frame (its whole frames kept). Empty when every frame is given.
    public let warnings: [DecodingWarning]

    private var state: State
    private var index = 0

    private enum State: Sendable {
        case still
        case gif(GIFContainer, GIFWalker, AnimationCanvas?)
        case webp(WebPFrameWalker, AnimationCanvas?)
    }

    /// Reads the frames of `source` as `options` say, keeping at most `maxFrames` (at least 1).
    public init(source: ImageSource, options: DecodingOptions = DecodingOptions(), maxFrames: Int = 256) throws(ImageCodecError) {
        self.source = source
        // One place for where the output comes from: the first frame's analysis resolves a trim
        // or a smart crop for the whole animation.
        let resolved = try source.resolvingSmartGravity(source.resolvingTrim(options))
        self.options = resolved
        let plan = try Self.plan(source, options: resolved, maxFrames: maxFrames)
        (frameCount, plannedBytes) = (plan.frameCount, plan.memoryBytes)
        warnings = Self.warnings(source, frameCount: plan.frameCount, maxFrames: maxFrames)
        switch source.layout {
        case .gif(let gif) where source.header.frameCount > 1:
            state = .gif(gif.container, GIFWalker(offset: gif.container.blocksStart), nil)
            plays = gif.container.plays
        case .webp(let webp) where webp.container.isAnimated:
            state = .webp(try source.data.withBytes { WebPFrameWalker($0) }, nil)
            plays = webp.container.plays
        default:
            state = .still
            plays = 0
        }
    }

    /// The frames a decoder leaves out that its caller did not ask it to (`maxFrames` is asked).
    private static func warnings(_ source: ImageSource, frameCount: Int, maxFrames: Int) -> [DecodingWarning] {
        var warnings: [DecodingWarning] = []
        if case .gif(let gif) = source.layout, gif.container.truncated {
            let whole = gif.container.frameCount
            warnings.append(
                DecodingWarning(
                    code: 0, message: "the file ends inside frame \(whole + 1): the \(whole) whole frame\(whole == 1 ? "" : "s") before it kept"))
        }
        if frameCount < min(source.header.frameCount, maxFrames) {
            warnings.append(
                DecodingWarning(
                    code: 0,
                    message: "\(frameCount) of \(source.header.frameCount) frames kept: more would pass the animation pixel limit"))
        }
        return warnings
    }

    /// How many frames a decoder of `source` with `options` gives, and the most it holds while
    /// making one (see ``plannedBytes``), from the header alone: what a server admits before it
    /// starts.
    public static func plan(
        _ source: ImageSource, options: DecodingOptions, maxFrames: Int = 256
    ) throws(ImageCodecError) -> (frameCount: Int, memoryBytes: Int) {
        guard maxFrames >= 1 else { throw .invalidArgument("maxFrames must be at least 1, got \(maxFrames)") }
        let header = source.header
        let animated: Bool
        switch source.layout {
        case .gif: animated = header.frameCount > 1
        case .webp(let webp): animated = webp.container.isAnimated
        default: animated = false
        }
        guard animated else { return (1, try source.plan(options).memoryBytes) }
        let plan = try options.storedPlan(for: header)
        let output = plan.width * plan.height * 4
        let canvas = header.width * header.height * 4
        let window = RowWindow(rowWidth: header.width, rowCount: header.height, crop: plan.crop)
        let resample = RowSinks.plannedBytes(window: window, target: (plan.width, plan.height), format: .rgba)
        // The canvas, a "restore" frame's copy or a WebP frame's pixels (each at most a
        // canvas), a GIF row or libwebp's decoder, the resampler, the frame's bitmap and its
        // gray copy (2 bytes a pixel) when asked.
        let gray = options.grayscale ? output / 2 : 0
        let memory = 2 * canvas + max(GIFDecoder.libraryBytes + header.width, 256 << 10) + resample + output + gray
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        let fitting = overflow ? 1 : max(1, options.limits.maxAnimationPixels / max(1, pixels))
        return (max(1, min(header.frameCount, maxFrames, fitting)), memory)
    }

    /// The next frame, or nil after the last of ``frameCount``. Throws as a decode does
    /// (`truncatedData`, `corruptData`, a limit, `cancelled`).
    public mutating func next() throws(ImageCodecError) -> AnimationFrame? {
        guard index < frameCount else { return nil }
        try ImageCodecError.checkCancellation()
        defer { index += 1 }
        let header = source.header
        switch state {
        case .still:
            return AnimationFrame(index: index, bitmap: try source.decode(options).bitmap, durationMilliseconds: 0)
        case .gif(let container, var walker, let existing):
            var canvas = try Self.canvas(existing, header)
            let limits = options.limits
            let frame = try source.data.withBytes { (bytes) throws(ImageCodecError) -> GIFFrame in
                guard let frame = try walker.next(bytes) else { throw .corruptData("the GIF has fewer frames than its walk found") }
                try GIFDecoder.draw(frame, of: container, bytes, on: &canvas, limits: limits)
                return frame
            }
            let bitmap = try finished(canvas.rendered(header, format: .rgba, options: options))
            state = .gif(container, walker, canvas)
            return AnimationFrame(index: index, bitmap: bitmap, durationMilliseconds: frame.durationMilliseconds)
        case .webp(var walker, let existing):
            var canvas = try Self.canvas(existing, header)
            let limits = options.limits
            let frame = try source.data.withBytes { (bytes) throws(ImageCodecError) -> WebPFrame in
                guard let frame = try walker.next(bytes, canvas: (header.width, header.height)) else {
                    throw .corruptData("the WebP has fewer frames than its ANMF chunks")
                }
                try Self.draw(frame, bytes, on: &canvas, limits: limits)
                return frame
            }
            let bitmap = try finished(canvas.rendered(header, format: .rgba, options: options))
            state = .webp(walker, canvas)
            return AnimationFrame(
                index: index, bitmap: bitmap,
                durationMilliseconds: frame.durationMilliseconds <= 10 ? 100 : frame.durationMilliseconds)
        }
    }

    /// The canvas frames so far have left, or a new one.
    private static func canvas(_ existing: AnimationCanvas?, _ header: ImageHeader) throws(ImageCodecError) -> AnimationCanvas {
        if let existing { return existing }
        return try AnimationCanvas(width: header.width, height: header.height)
    }

    private func finished(_ bitmap: Bitmap) throws(ImageCodecError) -> Bitmap {
        options.grayscale ? try bitmap.grayscaled() : bitmap
    }

    /// An animated WebP's frame: its bitstream decoded by libwebp at its own size, then drawn.
    private static func draw(
        _ frame: WebPFrame, _ bytes: UnsafeRawBufferPointer, on canvas: inout AnimationCanvas, limits: DecodingLimits
    ) throws(ImageCodecError) {
        try limits.check(width: frame.width, height: frame.height)
        let area = canvas.area(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
        try canvas.begin(area, disposal: frame.disposesToBackground ? .clear : .keep)
        let bitstream = UnsafeRawBufferPointer(rebasing: bytes[frame.bitstream])
        var features = iec_webp_features()
        var message = ShimMessage.buffer()
        guard
            iec_webp_get_features(bitstream.baseAddress?.assumingMemoryBound(to: UInt8.self), bitstream.count, &features, &message)
                == IEC_OK
        else { throw .corruptData(message.shimMessage) }
        // The bitstream must be the frame its chunk declares: libwebp decodes what it says.
        guard Int(features.width) == frame.width, Int(features.height) == frame.height else {
            throw .corruptData("a frame's bitstream is \(features.width)×\(features.height), its ANMF chunk says \(frame.width)×\(frame.height)")
        }
        var pixels = try ChargedArray<UInt8>(repeating: 0, count: frame.width * frame.height * 4)
        let status = pixels.elements.withUnsafeMutableBufferPointer { output in
            iec_webp_decode(
                bitstream.baseAddress?.assumingMemoryBound(to: UInt8.self), bitstream.count, 4, Int32(frame.width), Int32(frame.height),
                output.baseAddress, frame.width * 4, ImageCodecError.stopProbe, &message)
        }
        guard status == IEC_OK else {
            throw ImageCodecError(shimStatus: status, message: message.shimMessage, variant: ImageCodecError.UnsupportedFormat.webpVariant)
        }
        pixels.elements.withUnsafeBufferPointer { pixels in
            canvas.drawRGBA(pixels, frameWidth: frame.width, x: frame.x, y: frame.y, blend: frame.blends)
        }
    }
}
