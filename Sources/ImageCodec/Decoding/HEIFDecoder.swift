import CImageCodecShim

/// HEIC and AVIF header probe and decode on top of libheif (HEVC through libde265, AV1 through
/// libaom): the primary image, grids and tiles, 8 to 12 bits, alpha, with `irot`,
/// `imir` and `clap` applied by libheif, so sizes and gravity refer to the upright image. An
/// ICC profile goes through the engine's colour management.
///
/// HEVC and AV1 have no reduced-scale decode: the image is decoded at full size, then its rows
/// stream through the resampler. Memory: libheif has no allocator hook, so, as for WebP, the
/// plan counts what it allocates for the declared size (the file's copy, the decoded planes at
/// their depth, the interleaved 8-bit image, the codec's reference pictures) and the limits
/// bound that size before anything is decoded.
enum HEIFDecoder {
    /// What the plan needs beyond the header.
    struct Layout: Sendable, Hashable {
        /// The encoded file, which libheif holds a copy of from the header read on.
        var fileBytes: Int
        var lumaBits: Int
        var hasICCProfile: Bool
        /// Colour premultiplied by alpha (`prem`): libheif hands it out so, and it is divided
        /// out row by row before the resampler, which takes straight alpha.
        var premultipliedAlpha: Bool
        /// What the nclx code points come to when there is no ICC profile (no colour box at
        /// all: unspecified, which is sRGB).
        var nclx: NCLXProfile.Verdict
        /// Coded images decoded for the primary image (tiles, layers, alpha) and the largest of
        /// them in pixels, from the container walk.
        var codedImages: Int
        var largestCodedPixels: Int
        /// The ICC profile's bytes in the file, from the container walk (read there, never from
        /// libheif's copy).
        var iccProfile: Range<Int>?
        /// The EXIF item's bytes in the file (see ``HEIFContainer/exif``).
        var exif: Range<Int>?

        /// The bytes of the profile colour management will be handed.
        var profileBytes: Int {
            guard case .profile(let profile) = nclx else { return 0 }
            return profile.count
        }
    }

    static func open(
        _ bytes: UnsafeRawBufferPointer, format: ImageFormat, limits: DecodingLimits
    ) throws(ImageCodecError) -> (HEIFReader, ImageHeader, Layout) {
        // The container's shape first: libheif never sees one that can crash or stall it.
        let container = try HEIFContainer(bytes, limits: limits)
        let reader = try HEIFReader(bytes: bytes, limits: limits)
        let info = reader.info
        let (width, height) = (Int(info.width), Int(info.height))
        guard width > 0, height > 0 else { throw .corruptData("the primary image has no size") }
        try limits.check(width: width, height: height)
        // libheif's size is the walk's `ispe` after a rotation and a clean aperture: never more.
        let declaredLong = max(container.declaredWidth, container.declaredHeight)
        guard max(width, height) <= declaredLong, width * height <= container.declaredWidth * container.declaredHeight else {
            throw .corruptData("libheif reports \(width)×\(height) for a \(container.declaredWidth)×\(container.declaredHeight) image")
        }
        let bits = info.luma_bits > 0 ? Int(info.luma_bits) : 8
        // libheif applies the transformations: what it reports is the upright image.
        let header = ImageHeader(
            format: format, width: width, height: height, orientation: .up, hasAlpha: info.has_alpha != 0, bitDepth: bits,
            colorModel: .rgb, progressive: false)
        let hasICCProfile = info.profile_kind == 1
        let layout = Layout(
            fileBytes: bytes.count, lumaBits: bits, hasICCProfile: hasICCProfile,
            premultipliedAlpha: info.has_alpha != 0 && info.premultiplied_alpha != 0,
            nclx: hasICCProfile ? .sRGB : NCLXProfile.verdict(primaries: Int(info.nclx_primaries), transfer: Int(info.nclx_transfer)),
            codedImages: container.codedImages, largestCodedPixels: container.largestCodedPixels,
            iccProfile: hasICCProfile ? container.iccProfile : nil, exif: container.exif)
        return (reader, header, layout)
    }

    private static func setUp(_ header: ImageHeader, options: DecodingOptions) throws(ImageCodecError) -> (ResizePlan, RowWindow, PixelFormat) {
        try options.limits.check(width: header.width, height: header.height)
        let plan = try options.storedPlan(for: header)
        return (plan, RowWindow(rowWidth: header.width, rowCount: header.height, crop: plan.crop), header.hasAlpha ? .rgba : .rgb)
    }

    /// What libheif and its codecs allocate for a decode: the file's copy, the decoded Y, Cb, Cr
    /// (and alpha) planes at their depth (4:4:4 at worst), two reference pictures in the codec,
    /// the interleaved 8-bit result (and, from more than 8 bits, the deeper image it is converted
    /// from), and the codecs' own state.
    private static func libraryBytes(_ header: ImageHeader, _ layout: Layout, channels: Int) -> Int {
        // A grid's canvas, or the largest coded image (a tile, an overlay's layer) if larger.
        let pixels = max(header.width * header.height, layout.largestCodedPixels)
        // libaom holds AV1 frames at two bytes a sample whatever the stream's depth: 8-bit AVIFs
        // of 9-24 MP took 14-15 bytes a pixel in `heif-convert -d aom` (to y4m, no RGB), twice
        // what dav1d took, so AV1 is planned as if it were deep.
        let deep = layout.lumaBits > 8
        let planes = (3 + (header.hasAlpha ? 1 : 0)) * (deep || header.format == .avif ? 2 : 1)
        let straightRow = layout.premultipliedAlpha ? header.width * channels : 0
        return layout.fileBytes + 3 * pixels * planes + pixels * channels * (deep ? 3 : 1) + straightRow + (8 << 20)
    }

    static func plan(_ header: ImageHeader, _ layout: Layout, heldBytes: Int, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let (plan, window, format) = try setUp(header, options: options)
        let memory =
            heldBytes + libraryBytes(header, layout, channels: format.channels)
            + RowSinks.plannedBytes(window: window, target: (plan.width, plan.height), format: format)
        return DecodePlan(
            header: header, plan: plan, scaleNumerator: 8, decodeBytes: memory, channels: format.channels, appliesOrientation: false)
    }

    static func decode(
        _ reader: HEIFReader, _ bytes: UnsafeRawBufferPointer, _ header: ImageHeader, _ layout: Layout, options: DecodingOptions
    ) throws(ImageCodecError) -> DecodedImage {
        let (plan, window, format) = try setUp(header, options: options)
        var warnings: [DecodingWarning] = []
        // Within the limit: the container walk refused a larger profile before libheif read it.
        var profile = layout.iccProfile.map { [UInt8](bytes[$0]) }
        // No ICC profile: the nclx code points' own (Display P3, BT.2020, PQ, …), built by
        // Little CMS, goes through the same colour management.
        if !layout.hasICCProfile {
            switch layout.nclx {
            case .sRGB: break
            case .profile(let bytes): profile = bytes
            case .unsupported(let reason): warnings.append(DecodingWarning(code: 0, message: "\(reason) not converted: decoded as sRGB"))
            }
        }
        let colorPlan = ColorPlan.make(profile: profile, layout: ColorLayout(format), management: options.colorManagement)
        let sink = RowSinks.make(
            window: window, inputChannels: format.channels, target: (plan.width, plan.height), format: format,
            boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        // A derived image's canvas comes from its own item data, not from the size checked in
        // the header: it may not be longer on a side than the image it claims to be.
        // AV1 through libaom rather than dav1d: libheif 1.15's dav1d plugin leaks on some
        // decode errors (heif-decode findings), libaom frees everything, and costs about 10% more
        // time (a 1024 px AVIF: 23 ms against 21, with the process start).
        let decoder = header.format == .avif ? "aom" : nil
        try reader.decode(channels: format.channels, maxSide: max(header.width, header.height) + 1, decoder: decoder) {
            (pixels, stride, width, height, warning) throws(ImageCodecError) in
            if let warning {
                // What libheif papered over is damage: an error unless partial images are allowed.
                guard options.allowsPartialImages else { throw .corruptData(warning) }
                warnings.append(DecodingWarning(code: 0, message: warning))
            }
            guard (width, height) == (header.width, header.height) else {
                throw .corruptData("libheif decoded \(width)×\(height), the header says \(header.width)×\(header.height)")
            }
            guard layout.premultipliedAlpha, format == .rgba else {
                for y in 0..<height { sink.consume(pixels + y * stride) }
                return
            }
            let straight = UnsafeMutablePointer<UInt8>.allocate(capacity: width * 4)
            defer { straight.deallocate() }
            for y in 0..<height {
                Self.divideAlpha(pixels + y * stride, into: straight, count: width)
                sink.consume(straight)
            }
        }
        let bitmap = Bitmap(
            unchecked: plan.width, height: plan.height, format: format, pixels: try sink.finish(), iccProfile: colorPlan.outputProfile)
        return DecodedImage(bitmap: bitmap, header: header, warnings: (colorPlan.warning.map { [$0] } ?? []) + warnings)
    }

    /// Premultiplied RGBA → straight, rounded: colour × 255 / alpha, at most 255 (a damaged or
    /// lossy file can store colour above its alpha); fully transparent pixels become black.
    static func divideAlpha(_ row: UnsafePointer<UInt8>, into straight: UnsafeMutablePointer<UInt8>, count: Int) {
        for pixel in 0..<count {
            let offset = pixel * 4
            let alpha = Int(row[offset + 3])
            straight[offset + 3] = UInt8(alpha)
            for channel in 0..<3 {
                let value = Int(row[offset + channel])
                straight[offset + channel] =
                    switch alpha {
                    case 255: UInt8(value)
                    case 0: 0
                    default: UInt8(min(255, (value * 255 + alpha / 2) / alpha))
                    }
            }
        }
    }
}
