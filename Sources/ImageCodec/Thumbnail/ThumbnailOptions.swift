/// What `Thumbnailer` produces from each input.
public struct ThumbnailOptions: Sendable, Hashable {
    /// What size to make (fit, fill with a gravity, fill-down, force); `nil` keeps the source
    /// size (orientation is still applied).
    public var resize: Resize?
    /// Longest side of the output: the shorthand for `resize = .maxPixelSize(n)`. Reads nil
    /// when `resize` is anything else.
    public var maxPixelSize: Int? {
        get { resize?.maxPixelSize }
        set { resize = newValue.map(Resize.maxPixelSize) }
    }
    /// The part of each upright image kept before resizing (nil: all of it).
    public var region: CropRegion?
    /// Borders cut off each upright image before the region and the resize (nil: none).
    public var trim: Trim?
    /// Degrees each upright image is turned clockwise after its resize: 0, 90, 180 or 270.
    /// The resize's box, its gravity and the region refer to the turned image.
    public var rotation = 0
    /// Blur, sharpen or pixelate after the resize and the turn, before the canvas.
    public var filters = ImageFilters()
    /// What goes around the resized image: extension to a box or aspect ratio, padding,
    /// background (a white square tile around any photo). By default nothing.
    public var canvas = Canvas()
    /// The turn, the filters and the canvas, as one ``Finishing``.
    public var finishing: Finishing { Finishing(rotation: rotation, filters: filters, canvas: canvas) }
    /// The output format.
    public var format: ImageFormat
    /// How JPEG outputs are encoded.
    public var jpeg: JPEGEncodingOptions
    /// How PNG outputs are encoded.
    public var png: PNGEncodingOptions
    /// How WebP outputs are encoded.
    public var webp = WebPEncodingOptions()
    /// How AVIF outputs are encoded.
    public var avif = AVIFEncodingOptions()
    /// Which of each source's EXIF its thumbnail carries: none by default.
    public var keptMetadata = KeptMetadata.none
    /// sRGB outputs without a profile (the default), or the source's values and profile.
    public var colorManagement: ColorManagement
    /// Ceilings checked before any large allocation.
    public var limits: DecodingLimits
    /// An animated source (GIF, WebP) written as WebP is an animated WebP of its frames, each
    /// composited, resized and finished like a still image, with the source's durations and
    /// number of plays; true writes its first frame alone. JPEG, PNG and AVIF outputs are
    /// always the first frame.
    public var firstFrameOnly = false
    /// Most frames an animated output keeps (the first ones): 256 by default.
    public var maxFrames = 256
    /// JPEG and WebP inputs decode at the smallest scale that covers the output
    /// (`DecodingOptions.fastShrinkOnLoad`); off by default.
    public var fastShrinkOnLoad = false
    /// Bytes the decodes of a batch may hold at once, by their plans (`DecodePlan.memoryBytes`
    /// plus the encoded file): a decode starts only while it fits beside those running, except
    /// that one decode alone always may. nil: `MemoryBudget.defaultDecodeBudget` for the whole
    /// batch (an eighth of RAM, 128 MiB-1 GiB), as the pipeline's decodes have.
    public var memoryBudget: Int?

    /// The budget per job a batch had before it took the pipeline's rule: 64 MiB, which
    /// serialised 110-290 MiB HEIC plans on machines that had the memory for two.
    @available(*, deprecated, message: "a batch's default budget is MemoryBudget.defaultDecodeBudget, for the whole batch")
    public static let defaultMemoryBudgetPerJob = 64 << 20

    /// Options for a batch; by default full-size, JPEG at quality 85, in sRGB.
    public init(
        maxPixelSize: Int? = nil, format: ImageFormat = .jpeg, jpeg: JPEGEncodingOptions = JPEGEncodingOptions(),
        png: PNGEncodingOptions = PNGEncodingOptions(), colorManagement: ColorManagement = .convertToSRGB,
        limits: DecodingLimits = DecodingLimits(), memoryBudget: Int? = nil
    ) {
        self.init(
            resize: maxPixelSize.map(Resize.maxPixelSize), format: format, jpeg: jpeg, png: png,
            colorManagement: colorManagement, limits: limits, memoryBudget: memoryBudget)
    }

    /// Options for a batch resized as `resize` says (nil: full size).
    public init(
        resize: Resize?, format: ImageFormat = .jpeg, jpeg: JPEGEncodingOptions = JPEGEncodingOptions(),
        png: PNGEncodingOptions = PNGEncodingOptions(), colorManagement: ColorManagement = .convertToSRGB,
        limits: DecodingLimits = DecodingLimits(), memoryBudget: Int? = nil
    ) {
        self.resize = resize
        self.memoryBudget = memoryBudget
        self.format = format
        self.jpeg = jpeg
        self.png = png
        self.colorManagement = colorManagement
        self.limits = limits
    }
}

/// One finished thumbnail.
public struct ThumbnailResult: Sendable, Hashable {
    /// The input file's path.
    public var input: String
    /// The written file's path.
    public var output: String
    /// Width of the thumbnail in pixels.
    public var width: Int
    /// Height of the thumbnail in pixels.
    public var height: Int
    /// Size of the written file.
    public var bytes: Int
    /// Wall time for read, decode, resample, encode and write.
    public var milliseconds: Double
    /// Frames written: 1 for a still image, the animation's kept frames for an animated WebP.
    public var frames: Int
    /// What the decode left out or could not honour (a truncated GIF's partial frame, frames
    /// past the animation pixel limit, an ICC profile ignored), for the caller to report.
    public var warnings: [DecodingWarning]

    /// Builds a result, e.g. a fake for an app's own tests; `Thumbnailer` makes the real ones.
    public init(
        input: String, output: String, width: Int, height: Int, bytes: Int, milliseconds: Double, frames: Int = 1,
        warnings: [DecodingWarning] = []
    ) {
        self.frames = frames
        self.warnings = warnings
        self.input = input
        self.output = output
        self.width = width
        self.height = height
        self.bytes = bytes
        self.milliseconds = milliseconds
    }
}
