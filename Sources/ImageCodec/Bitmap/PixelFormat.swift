/// Layout of one pixel in a `Bitmap`: 8 bits per channel, interleaved, alpha last and straight
/// (not premultiplied), which is what the encoders and most consumers expect.
public enum PixelFormat: Int, Sendable, Hashable, CaseIterable {
    /// One channel: luma.
    case gray = 1
    /// Luma and alpha.
    case grayAlpha = 2
    /// Red, green, blue.
    case rgb = 3
    /// Red, green, blue and alpha.
    case rgba = 4

    /// Bytes (channels) per pixel.
    public var channels: Int { rawValue }

    /// True for the formats with an alpha channel.
    public var hasAlpha: Bool { self == .grayAlpha || self == .rgba }

    /// True for the one-colour-channel formats.
    public var isGray: Bool { self == .gray || self == .grayAlpha }

    /// The same colour model without its alpha channel.
    public var withoutAlpha: PixelFormat { isGray ? .gray : .rgb }
}
