/// What `Thumbnailer` produces from each input.
public struct ThumbnailOptions: Sendable, Hashable {
    /// Longest side of the output; `nil` keeps the source size (orientation is still applied).
    public var maxPixelSize: Int?
    /// The output format.
    public var format: ImageFormat
    /// How JPEG outputs are encoded.
    public var jpeg: JPEGEncodingOptions
    /// How PNG outputs are encoded.
    public var png: PNGEncodingOptions
    /// sRGB outputs without a profile (the default), or the source's values and profile.
    public var colorManagement: ColorManagement
    /// Ceilings checked before any large allocation.
    public var limits: DecodingLimits

    /// Options for a batch; by default full-size, JPEG at quality 85, in sRGB.
    public init(maxPixelSize: Int? = nil, format: ImageFormat = .jpeg, jpeg: JPEGEncodingOptions = JPEGEncodingOptions(),
                png: PNGEncodingOptions = PNGEncodingOptions(), colorManagement: ColorManagement = .convertToSRGB,
                limits: DecodingLimits = DecodingLimits()) {
        self.maxPixelSize = maxPixelSize
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

    /// Builds a result, e.g. a fake for an app's own tests; `Thumbnailer` makes the real ones.
    public init(input: String, output: String, width: Int, height: Int, bytes: Int, milliseconds: Double) {
        self.input = input
        self.output = output
        self.width = width
        self.height = height
        self.bytes = bytes
        self.milliseconds = milliseconds
    }
}
