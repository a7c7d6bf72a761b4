/// How to decode: target size, orientation, tolerance for damage, and resource limits.
public struct DecodingOptions: Sendable, Hashable {
    /// What size to make, in the upright image's pixels: fit, fill with a gravity, fill-down or
    /// force (see `Resize`); `nil` keeps the full size.
    public var resize: Resize?
    /// The part of the upright image to keep before resizing (nil: all of it); `resize` then
    /// treats that part as the whole image. Decoders crop while decoding.
    public var region: CropRegion?
    /// Borders to cut off before `region` and `resize` apply (nil: none): found on a decode of
    /// its own (``ImageSource/resolvingTrim(_:)``), which the plan counts.
    public var trim: Trim?
    /// The trim's window once found, in the upright image's pixels: what `region` and `resize`
    /// take as the whole image. Set by ``ImageSource/resolvingTrim(_:)``, which clears `trim`.
    var trimmedArea: PixelRect?
    /// Longest side of the result, in pixels (`resize` = `.maxPixelSize(n)`, never upscaled):
    /// the shorthand for "fit in n×n". Reads nil when `resize` is anything else.
    public var maxPixelSize: Int? {
        get { resize?.maxPixelSize }
        set { resize = newValue.map(Resize.maxPixelSize) }
    }
    /// Rotate/flip the pixels according to EXIF orientation so the result is upright.
    public var appliesOrientation: Bool
    /// Return what could be decoded from truncated or damaged files (libjpeg fills the rest
    /// with grey) instead of failing. Off by default: a half-grey thumbnail is a wrong image.
    public var allowsPartialImages: Bool
    /// Deliver luma only (Y = 0.299 R + 0.587 G + 0.114 B, alpha kept). For colour JPEGs
    /// libjpeg then skips chroma entirely, which makes decoding for quality metrics cheaper.
    /// Colour JPEGs are then not colour-managed (the Y channel is taken as stored).
    public var grayscale: Bool
    /// Convert profiled sources to sRGB (the default) or keep their values and profile.
    public var colorManagement: ColorManagement
    /// Ceilings checked before any large allocation.
    public var limits: DecodingLimits
    /// JPEG and WebP: decode at the smallest scale (a JPEG's DCT scale, libwebp's rescaler)
    /// whose output still covers the target, and let Lanczos do the rest, if any — imgproxy's
    /// rule, thumbor's `draft`, sharp's default.
    /// Faster (a 2048 px photo fitted into 512 decodes at 1/4 with no resampling), at a small
    /// cost in sharpness and aliasing. Off by default: the engine then keeps 1.75-2× of headroom
    /// for Lanczos (2× for WebP), which is what its SSIM contract with `vipsthumbnail` is measured at.
    public var fastShrinkOnLoad: Bool = false
    /// Knobs of the decode path that Benchmarks' thumbnail-stages turns one at a time to price
    /// each stage in quality and time. Not API: the defaults are the engine's choices.
    @_spi(Tuning) public var tuning = DecodingTuning()

    /// Options for a decode; the defaults give a full-size, upright, sRGB bitmap and refuse damage.
    public init(
        maxPixelSize: Int? = nil, appliesOrientation: Bool = true, allowsPartialImages: Bool = false, grayscale: Bool = false,
        colorManagement: ColorManagement = .convertToSRGB, limits: DecodingLimits = DecodingLimits(), fastShrinkOnLoad: Bool = false
    ) {
        self.init(
            resize: maxPixelSize.map(Resize.maxPixelSize), appliesOrientation: appliesOrientation,
            allowsPartialImages: allowsPartialImages, grayscale: grayscale, colorManagement: colorManagement, limits: limits,
            fastShrinkOnLoad: fastShrinkOnLoad)
    }

    /// Options for a decode to the size `resize` makes (nil: full size).
    public init(
        resize: Resize?, appliesOrientation: Bool = true, allowsPartialImages: Bool = false, grayscale: Bool = false,
        colorManagement: ColorManagement = .convertToSRGB, limits: DecodingLimits = DecodingLimits(), fastShrinkOnLoad: Bool = false
    ) {
        self.resize = resize
        self.fastShrinkOnLoad = fastShrinkOnLoad
        self.appliesOrientation = appliesOrientation
        self.allowsPartialImages = allowsPartialImages
        self.grayscale = grayscale
        self.colorManagement = colorManagement
        self.limits = limits
    }
}

/// See `DecodingOptions.tuning`.
@_spi(Tuning) public struct DecodingTuning: Sendable, Hashable {
    /// How much larger than the target the DCT-scaled image must stay at 3/8 to 7/8
    /// (`TargetSize.dctHeadroom`).
    public var dctHeadroom = TargetSize.dctHeadroom
    /// The same at the coarse scales 1/8 and 2/8, and at 4/8 with `libjpegReducedIDCT`
    /// (`TargetSize.boxScaleHeadroom`).
    public var boxScaleHeadroom = TargetSize.boxScaleHeadroom
    /// libjpeg-turbo's own IDCTs at every reduced scale (at 4/8 and 2/8 averages of 2 or 4
    /// outputs; its integer ones at 3/8 to 7/8) instead of the engine's (`ReducedScaleIDCT`);
    /// libvips uses libjpeg's.
    public var libjpegReducedIDCT = false
    /// Only the scales 1/8, 1/4, 1/2 and 1, as libvips uses.
    public var powerOfTwoScalesOnly = false
    /// Average k×k blocks before Lanczos for reductions of 4× and more.
    public var boxPreReduction = true
    /// libjpeg's "fancy" (triangle-filtered) chroma upsampling rather than replication.
    public var fancyUpsampling = true
    /// libjpeg's fast integer IDCT instead of the accurate one.
    public var fastIDCT = false
    /// libjpeg-turbo's own entropy decoders for Huffman-coded scans instead of the engine's
    /// (`jpeg_sequential.c` and `jpeg_progressive.c` in the C shim), for comparisons. Both give
    /// the same coefficients; only the engine's warns of every bad Huffman code, which fails a
    /// strict decode (see "Decoding choices").
    public var libjpegEntropyDecoders = false

    /// The engine's choices.
    public init() {}
}

/// Resource ceilings applied before any large allocation.
public struct DecodingLimits: Sendable, Hashable {
    /// Largest width × height accepted. The default, 250 MP, admits today's 200 MP phone sensors.
    public var maxPixelCount: Int
    /// Largest number of scans in a progressive JPEG; each scan re-reads the whole coefficient
    /// buffer, so crafted files with thousands of tiny scans are a denial-of-service vector.
    public var maxProgressiveScans: Int
    /// Largest encoded file read from disk, checked before anything is allocated (`io` error
    /// with `EFBIG` beyond it). 512 MiB is far above any photo at the pixel limit.
    public var maxFileSize: Int
    /// Longest side accepted. Decoding holds a few source rows at up to 16 bytes a pixel, so a
    /// 30,000,000×1 PNG (233 KB compressed) would otherwise cost half a gigabyte while passing
    /// the pixel-count limit. 100,000 admits any panorama JPEG can hold (65,500).
    public var maxDimension: Int
    /// Largest ICC profile kept, in bytes: a PNG's iCCP is inflated only when its declared
    /// size is within it, a JPEG's APP2 chunks are kept only while their total is. A larger
    /// profile is ignored with a warning (``DecodedImage/warnings``) and the pixels are read as
    /// sRGB. Real profiles are well under the default, 1 MiB; a zlib bomb can declare 4 GB.
    public var maxICCProfileBytes: Int
    /// Largest EXIF block read for the orientation, in bytes (a JPEG's APP1 segment cannot
    /// pass 64 KiB; a PNG's eXIf can, and is read only this far).
    public var maxEXIFBytes: Int
    /// Most chunks a PNG may have before its image data (`limitExceeded` beyond). Chunks the
    /// engine does not use are skipped unread, but each costs a CRC pass and a dispatch; real
    /// files have a dozen or so.
    public var maxChunksBeforeImageData: Int
    /// Most canvas pixels an animation's kept frames may add up to (frames × width × height):
    /// ``AnimationDecoder`` keeps only the frames that fit (at least the first). Each frame is
    /// composited and resized in turn, so this bounds the work, not the memory (a frame or two).
    /// The default, 1 G, is 256 frames of 2048 × 2048.
    public var maxAnimationPixels: Int

    /// Resource ceilings; the defaults admit any real photo and refuse bombs.
    public init(
        maxPixelCount: Int = 250_000_000, maxProgressiveScans: Int = 500, maxFileSize: Int = 512 << 20,
        maxDimension: Int = 100_000, maxICCProfileBytes: Int = 1 << 20, maxEXIFBytes: Int = 64 << 10,
        maxChunksBeforeImageData: Int = 1_000, maxAnimationPixels: Int = 1 << 30
    ) {
        self.maxPixelCount = maxPixelCount
        self.maxProgressiveScans = maxProgressiveScans
        self.maxFileSize = maxFileSize
        self.maxDimension = maxDimension
        self.maxICCProfileBytes = maxICCProfileBytes
        self.maxEXIFBytes = maxEXIFBytes
        self.maxChunksBeforeImageData = maxChunksBeforeImageData
        self.maxAnimationPixels = maxAnimationPixels
    }

    /// Throws unless `width × height` is positive and within the limits (`tooLarge`,
    /// `dimensionTooLarge`, or `corruptData` for a zero side), as the decoders do right after
    /// the header. Overflow-checked: header dimensions are attacker-controlled.
    public func check(width: Int, height: Int) throws(ImageCodecError) {
        guard width > 0, height > 0 else { throw .corruptData("image has zero width or height (\(width)×\(height))") }
        guard width <= maxDimension, height <= maxDimension else {
            throw .dimensionTooLarge(width: width, height: height, limit: maxDimension)
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maxPixelCount else {
            throw .tooLarge(width: width, height: height, limit: maxPixelCount)
        }
    }

    /// Bytes libjpeg may allocate for one image: enough for the whole-image coefficient buffer
    /// of a progressive JPEG at the pixel limit (2 bytes per coefficient, up to 4 components),
    /// plus working space. A backstop behind `check`, never the first line of defence.
    var jpegMemoryLimit: Int {
        let (bytes, overflow) = maxPixelCount.multipliedReportingOverflow(by: 8)
        let (limit, overflowAgain) = bytes.addingReportingOverflow(64 << 20)
        return overflow || overflowAgain ? Int.max : limit
    }
}
