import CImageCodecShim
import Foundation

/// Writes an animated WebP a frame at a time, through libwebp's `WebPAnimEncoder`: each frame
/// lossy at the options' quality and ``WebPEncodingOptions/animationMethod`` (alpha kept), and only what changed from the
/// previous frame stored, as libwebp decides.
///
/// The encoder keeps a few canvases of its own and the encoded frames until ``finish()``;
/// libwebp has no allocator hook, so that is charged to the current ``MemoryLedger`` as an
/// estimate made here (see ``plannedBytes(width:height:frames:)``), held until the writer
/// goes.
///
/// ```swift
/// let writer = try WebPAnimationWriter(width: 240, height: 135, plays: frames.plays)
/// while let frame = try frames.next() {
///     try writer.add(frame.bitmap, durationMilliseconds: frame.durationMilliseconds)
/// }
/// let webp = try writer.finish()
/// ```
public final class WebPAnimationWriter {
    /// Every frame's width.
    public let width: Int
    /// Every frame's height.
    public let height: Int
    private var encoder: OpaquePointer?
    private var timestamp = 0
    private var frames = 0
    private var charge: MemoryCharge?

    /// Bytes the writer holds for an animation of `frames` frames of `width × height`:
    /// libwebp's canvases and candidates (about 8 canvases' worth) and its encoded frames (a
    /// lossy frame is rarely a quarter of its raw pixels; counted at half).
    public static func plannedBytes(width: Int, height: Int, frames: Int) -> Int {
        let canvas = max(0, width) * max(0, height) * 4
        return 8 * canvas + max(1, frames) * canvas / 2 + (1 << 20)
    }

    /// A writer of `width × height` frames that plays `plays` times (0: forever).
    public init(width: Int, height: Int, plays: Int, options: WebPEncodingOptions = WebPEncodingOptions()) throws(ImageCodecError) {
        guard (1...16383).contains(width), (1...16383).contains(height) else {
            throw .invalidArgument("an animated WebP is 1-16383 pixels a side, got \(width)×\(height)")
        }
        guard (1...100).contains(options.quality) else { throw .invalidArgument("WebP quality must be 1...100, got \(options.quality)") }
        guard (0...6).contains(options.animationMethod) else {
            throw .invalidArgument("WebP animation method must be 0...6, got \(options.animationMethod)")
        }
        (self.width, self.height) = (width, height)
        charge = try MemoryLedger.current?.charge(Self.plannedBytes(width: width, height: height, frames: 1))
        var message = ShimMessage.buffer()
        var parameters = iec_webp_encode_params(
            width: UInt32(width), height: UInt32(height), channels: 4, quality: Float(options.quality),
            method: Int32(options.animationMethod), sharp_yuv: options.sharpYUV ? 1 : 0, stop: nil)
        guard let encoder = iec_webp_animation_create(Int32(width), Int32(height), Int32(min(max(0, plays), 65535)), &parameters, &message)
        else { throw .encodingFailed(message.shimMessage) }
        self.encoder = encoder
    }

    deinit {
        iec_webp_animation_free(encoder)
    }

    /// Adds a frame (the writer's size; gray or without alpha is widened) shown for
    /// `durationMilliseconds`.
    public func add(_ bitmap: Bitmap, durationMilliseconds: Int) throws(ImageCodecError) {
        guard let encoder else { throw .invalidArgument("the animation is finished") }
        guard bitmap.width == width, bitmap.height == height else {
            throw .invalidArgument("a \(bitmap.width)×\(bitmap.height) frame in a \(width)×\(height) animation")
        }
        try ImageCodecError.checkCancellation()
        try charge?.resize(to: Self.plannedBytes(width: width, height: height, frames: frames + 1))
        let rgba = try bitmap.expandingGray().withAlphaChannel()
        var message = ShimMessage.buffer()
        let status = rgba.pixels.withUnsafeBufferPointer { pixels in
            iec_webp_animation_add(encoder, pixels.baseAddress, rgba.bytesPerRow, Int32(clamping: timestamp), &message)
        }
        try ImageEncoder.checkEncoder(status, message: message.shimMessage)
        timestamp += max(0, durationMilliseconds)
        frames += 1
    }

    /// The animated WebP. The writer is finished after this, whatever happens.
    public func finish() throws(ImageCodecError) -> Data {
        guard let encoder else { throw .invalidArgument("the animation is finished") }
        defer {
            iec_webp_animation_free(encoder)
            self.encoder = nil
            charge = nil
        }
        guard frames > 0 else { throw .invalidArgument("an animation needs at least one frame") }
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = ShimMessage.buffer()
        let status = iec_webp_animation_finish(encoder, Int32(clamping: timestamp), &output, &length, &message)
        try ImageEncoder.checkEncoder(status, message: message.shimMessage)
        guard let output else { throw .encodingFailed(message.shimMessage) }
        return try ImageEncoder.adopt(output, length: length)
    }
}

extension WebPAnimationWriter {
    /// The frames `frames` has left, each finished as `finishing` says (turned, filtered, on
    /// its canvas), as an animated WebP with their durations and `frames.plays`: one frame
    /// decoded, finished and handed to the writer at a time. Also the frames' size.
    public static func encode(
        _ frames: inout AnimationDecoder, finishing: Finishing = Finishing(), options: WebPEncodingOptions = WebPEncodingOptions(),
        limits: DecodingLimits = DecodingLimits()
    ) throws(ImageCodecError) -> (data: Data, width: Int, height: Int) {
        var writer: WebPAnimationWriter?
        while let frame = try frames.next() {
            let bitmap = try finishing.apply(to: frame.bitmap, limits: limits)
            if writer == nil {
                writer = try WebPAnimationWriter(width: bitmap.width, height: bitmap.height, plays: frames.plays, options: options)
            }
            try writer?.add(bitmap, durationMilliseconds: frame.durationMilliseconds)
        }
        guard let writer else { throw .invalidArgument("no frames left to write") }
        return (try writer.finish(), writer.width, writer.height)
    }
}
