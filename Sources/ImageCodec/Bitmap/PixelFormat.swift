/// Layout of one pixel in a `Bitmap`: 8 bits per channel, interleaved, alpha last and straight
/// (not premultiplied), which is what the encoders and most consumers expect.
public enum PixelFormat: Int, Sendable, Hashable, CaseIterable {
    case gray = 1
    case grayAlpha = 2
    case rgb = 3
    case rgba = 4

    /// Bytes (channels) per pixel.
    public var channels: Int { rawValue }

    public var hasAlpha: Bool { self == .grayAlpha || self == .rgba }

    public var isGray: Bool { self == .gray || self == .grayAlpha }

    /// The same colour model without its alpha channel.
    public var withoutAlpha: PixelFormat { isGray ? .gray : .rgb }
}
