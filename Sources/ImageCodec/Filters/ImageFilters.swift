/// The filters a thumbnail may get after its resize and turn, before its canvas, in
/// imgproxy's order: blur, sharpen, pixelate (see the `Bitmap` filters for what each does).
///
/// ```swift
/// var options = ThumbnailOptions(resize: .fill(width: 400, height: 400))
/// options.filters = ImageFilters(blur: 8)      // a blurred placeholder
/// ```
public struct ImageFilters: Sendable, Hashable {
    /// Gaussian blur σ in pixels; nil: none.
    public var blur: Double?
    /// Unsharp-mask σ in pixels; nil: none.
    public var sharpen: Double?
    /// Pixelation block size in pixels; nil: none.
    public var pixelate: Int?

    /// Filters; by default none.
    public init(blur: Double? = nil, sharpen: Double? = nil, pixelate: Int? = nil) {
        self.blur = blur
        self.sharpen = sharpen
        self.pixelate = pixelate
    }

    /// True when ``apply(to:)`` changes nothing.
    public var isIdentity: Bool { blur == nil && sharpen == nil && pixelate == nil }

    /// The filtered bitmap; throws `invalidArgument` for a σ or block size out of range.
    public func apply(to bitmap: Bitmap) throws(ImageCodecError) -> Bitmap {
        var bitmap = bitmap
        if let blur { bitmap = try bitmap.blurred(sigma: blur) }
        if let sharpen { bitmap = try bitmap.sharpened(sigma: sharpen) }
        if let pixelate { bitmap = try bitmap.pixelated(size: pixelate) }
        return bitmap
    }

    /// Bytes ``apply(to:)`` holds for a `width` × `height` image of `channels`.
    public func plannedBytes(width: Int, height: Int, channels: Int) -> Int {
        isIdentity ? 0 : Bitmap.filterBytes(width: width, height: height, channels: channels)
    }
}
