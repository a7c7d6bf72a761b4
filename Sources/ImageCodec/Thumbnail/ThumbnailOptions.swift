/// What `Thumbnailer` produces from each input.
public struct ThumbnailOptions: Sendable, Hashable {
    /// Longest side of the output; `nil` keeps the source size (orientation is still applied).
    public var maxPixelSize: Int?
    public var format: ImageFormat
    public var jpeg: JPEGEncodingOptions
    public var png: PNGEncodingOptions
    public var limits: DecodingLimits

    public init(maxPixelSize: Int? = nil, format: ImageFormat = .jpeg, jpeg: JPEGEncodingOptions = JPEGEncodingOptions(),
                png: PNGEncodingOptions = PNGEncodingOptions(), limits: DecodingLimits = DecodingLimits()) {
        self.maxPixelSize = maxPixelSize
        self.format = format
        self.jpeg = jpeg
        self.png = png
        self.limits = limits
    }
}

/// One finished thumbnail.
public struct ThumbnailResult: Sendable, Hashable {
    public var input: String
    public var output: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    /// Wall time for read, decode, resample, encode and write.
    public var milliseconds: Double
}
