/// How the source stores colour, as reported by the header probe.
public enum ColorModel: String, Sendable, Hashable {
    /// One luminance channel (JPEG grayscale, PNG gray or gray+alpha).
    case gray
    /// Red, green, blue (JPEG YCbCr or RGB, PNG truecolour with or without alpha).
    case rgb
    /// Four-channel print colour (JPEG CMYK or YCCK, typically from Adobe software).
    case cmyk
    /// Indexed colour with a palette (PNG, GIF).
    case palette
}
