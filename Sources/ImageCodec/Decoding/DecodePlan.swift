/// What a decode will do, known from the header alone, before any pixel is decoded: the
/// output size, the DCT scale, and the memory the decode holds at its peak.
///
/// A batch or a server schedules decodes by it: admitting a decode only while the planned
/// memory of the decodes running fits a budget keeps two progressive 18 MP photos (each holding
/// its whole coefficient buffer, ~55 MB) from decoding at once.
///
/// ```swift
/// let decoder = ImageDecoder(options: DecodingOptions(resize: .fill(width: 400, height: 400)))
/// let plan = try decoder.plan(data)     // 400×400, scale 2/8, 37 MB for a progressive 12 MP photo
/// ```
public struct DecodePlan: Sendable, Hashable {
    /// The source's header.
    public var header: ImageHeader
    /// Width of the result in pixels (upright, when the options apply orientation).
    public var width: Int
    /// Height of the result in pixels.
    public var height: Int
    /// JPEG: M of the DCT scale M/8 libjpeg decodes at (8 = full size). PNG: always 8.
    public var scaleNumerator: Int
    /// Bytes the decode holds at its peak: what the header read left held (libraries' state,
    /// the kept EXIF and ICC profile), a progressive or multi-scan JPEG's coefficient buffer,
    /// an interlaced PNG's rows, the rows the libraries and the resampler keep, the result
    /// (and its rotated copy). Not counted: the encoded input, which the caller holds already.
    ///
    /// A promise, not an estimate: ``ImageSource/decode(_:)`` caps what libjpeg and libpng
    /// may allocate at this plus ``decodeOverheadBytes``.
    public var memoryBytes: Int

    /// The most a header read (``ImageSource/init(data:limits:)``) allocates in the codec
    /// libraries beyond the metadata it keeps, ``DecodingLimits/maxICCProfileBytes`` of ICC
    /// profile twice over (libpng inflates it, then stores a copy) and an EXIF block read in
    /// place: libjpeg's or libpng's state, tables and zlib's inflate window. Measured by the
    /// shim's counting allocator (`HostileInputBoundsTests`).
    public static let headerOverheadBytes = 256 << 10

    /// What a decode may allocate in the codec libraries beyond ``memoryBytes``: the slack of
    /// libjpeg's pools and of zlib's state over the rows the plan counts.
    public static let decodeOverheadBytes = 1 << 20

    /// A plan with these figures, e.g. for a test double.
    public init(header: ImageHeader, width: Int, height: Int, scaleNumerator: Int, memoryBytes: Int) {
        self.header = header
        self.width = width
        self.height = height
        self.scaleNumerator = scaleNumerator
        self.memoryBytes = memoryBytes
    }

    /// From a decoder's plan in stored coordinates, for a result of `channels` bytes a pixel
    /// that is then turned upright (one more copy of it) unless `options.appliesOrientation` is
    /// off, and made gray (a copy of 1 byte a pixel, 2 with alpha) when `options.grayscale` asks
    /// it of a colour result.
    init(header: ImageHeader, plan: ResizePlan, scaleNumerator: Int, decodeBytes: Int, channels: Int, options: DecodingOptions) {
        let rotates = options.appliesOrientation && header.orientation != .up
        let swaps = rotates && header.orientation.swapsDimensions
        let pixels = plan.width * plan.height
        let gray = options.grayscale && channels >= 3 ? pixels * (channels == 4 ? 2 : 1) : 0
        self.init(
            header: header, width: swaps ? plan.height : plan.width, height: swaps ? plan.width : plan.height,
            scaleNumerator: scaleNumerator, memoryBytes: decodeBytes + (rotates ? pixels * channels : 0) + gray)
    }
}

extension DecodingOptions {
    /// The resize's plan for an image with `header`, in the stored image's coordinates (the
    /// decoders rotate after decoding). Throws when the resize is invalid or its result would
    /// pass the limits (an enlarged output obeys the same ceilings as a source).
    func storedPlan(for header: ImageHeader) throws(ImageCodecError) -> ResizePlan {
        if let size = maxPixelSize, size <= 0 { throw .invalidArgument("maxPixelSize must be positive, got \(size)") }
        try resize?.validate(maxDimension: limits.maxDimension)
        try region?.validate(maxDimension: limits.maxDimension)
        try trim?.validate()
        let orientation = appliesOrientation ? header.orientation : .up
        let upright = orientation.swapsDimensions ? (width: header.height, height: header.width) : (width: header.width, height: header.height)
        // The resize plans the region (inside the trim's window) as if it were the image; its
        // crop then moves to where the region is.
        let base = trimmedArea ?? PixelRect(width: upright.width, height: upright.height)
        let within =
            region?.rect(sourceWidth: Int(base.width), sourceHeight: Int(base.height)) ?? PixelRect(width: Int(base.width), height: Int(base.height))
        let area = within.offset(by: -Int(base.x), -Int(base.y))
        var plan = ResizePlan(resize, sourceWidth: Int(area.width), sourceHeight: Int(area.height))
        plan.crop = plan.crop.offset(by: -Int(area.x), -Int(area.y))
        try limits.check(width: plan.width, height: plan.height)
        return plan.stored(orientation, storedWidth: header.width, storedHeight: header.height)
    }
}
