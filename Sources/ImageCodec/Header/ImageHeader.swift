/// What the header of a JPEG, PNG, WebP, HEIC, AVIF or GIF says, read without decoding any pixels.
public struct ImageHeader: Sendable, Hashable {
    /// JPEG, PNG, WebP, HEIC or AVIF.
    public var format: ImageFormat
    /// Stored width, before orientation is applied.
    public var width: Int
    /// Stored height, before orientation is applied.
    public var height: Int
    /// EXIF orientation (JPEG APP1 or PNG eXIf); `.up` when absent or invalid.
    public var orientation: ExifOrientation
    /// True when the image has an alpha channel or a PNG transparency chunk.
    public var hasAlpha: Bool
    /// Bits per sample in the file (8 for JPEG; 1, 2, 4, 8 or 16 for PNG).
    public var bitDepth: Int
    /// Gray, RGB, palette (PNG) or CMYK (JPEG), as stored.
    public var colorModel: ColorModel
    /// Progressive JPEG, Adam7-interlaced PNG or interlaced GIF (its first frame).
    public var progressive: Bool
    /// Frames in the file: 1 for a still image of any format; an animated GIF's or WebP's whole
    /// frames (a GIF cut short counts those before the cut).
    public var frameCount: Int

    /// Width as displayed, after orientation.
    public var displayWidth: Int { orientation.swapsDimensions ? height : width }
    /// Height as displayed, after orientation.
    public var displayHeight: Int { orientation.swapsDimensions ? width : height }

    /// A header with these facts, e.g. for a test double.
    public init(
        format: ImageFormat, width: Int, height: Int, orientation: ExifOrientation, hasAlpha: Bool,
        bitDepth: Int, colorModel: ColorModel, progressive: Bool, frameCount: Int = 1
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.bitDepth = bitDepth
        self.colorModel = colorModel
        self.progressive = progressive
        self.frameCount = frameCount
    }
}
