import CImageCodecShim

/// HEIC and AVIF header probe and decode: HEIC on top of libheif (HEVC through libde265), AVIF
/// on top of libavif (AV1 through dav1d). The primary image, grids and tiles, 8 to 12 bits,
/// alpha, with `irot`, `imir` and `clap` applied, so sizes and gravity refer to the upright
/// image. An ICC profile or nclx colour goes through the engine's colour management.
///
/// Both libraries are reached only after the engine's own container walk
/// (``HEIFContainer``) has accepted the file: a reference cycle, a grid of grids or a
/// hundred thousand items never reach them.
///
/// HEVC and AV1 have no reduced-scale decode: the image is decoded at full size, then its rows
/// stream through the resampler (an 8-bit HEIC's converted from libheif's planes by the engine,
/// see ``PlanarDecode``). Memory: neither library has an allocator hook, so, as for WebP, the
/// plan counts what they allocate for the declared size (the decoded planes at their depth,
/// the codec's pictures, the interleaved 8-bit image when the library converts) and the limits
/// bound that size before anything is decoded.
enum HEIFDecoder {
    /// What the plan needs beyond the header.
    struct Layout: Sendable, Hashable {
        /// The encoded file, at most what libheif gathers of it for the codec (both libraries
        /// read the file in place).
        var fileBytes: Int
        var lumaBits: Int
        var hasICCProfile: Bool
        /// Colour premultiplied by alpha (`prem`) as libheif hands it out: it is divided out
        /// row by row before the resampler, which takes straight alpha. (libavif divides it
        /// itself.)
        var premultipliedAlpha: Bool
        /// What the nclx code points come to when there is no ICC profile (no colour box at
        /// all: unspecified, which is sRGB).
        var nclx: NCLXProfile.Verdict
        /// Coded images decoded for the primary image (tiles, layers, alpha) and the largest of
        /// them in pixels, from the container walk.
        var codedImages: Int
        var largestCodedPixels: Int
        /// The ICC profile's bytes in the file, from the container walk (read there, never from
        /// the library's copy).
        var iccProfile: Range<Int>?
        /// The EXIF item's bytes in the file (see ``HEIFContainer/exif``).
        var exif: Range<Int>?
        /// The longest side of the primary image's `ispe`, before any transformation: what the
        /// library decodes before it crops to a clean aperture.
        var declaredSide: Int
        /// The library that decodes, and what it leaves to the engine.
        var library: Library
        /// For HEIC the engine can convert itself: the planes libheif is asked for instead of
        /// interleaved RGB (see ``planarDecode(_:_:)``).
        var planar: PlanarDecode?

        /// The bytes of the profile colour management will be handed.
        var profileBytes: Int {
            guard case .profile(let profile) = nclx else { return 0 }
            return profile.count
        }
    }

    enum Library: Sendable, Hashable {
        /// HEIC: libheif, which applies the transformations itself.
        case libheif
        /// AVIF: libavif, which reports the transformations and leaves them to the engine.
        case libavif(AVIFLayout)
    }

    /// A HEIC decoded to 8-bit YCbCr planes in the stream's own chroma layout and converted to
    /// RGB a row at a time by the engine (``YCbCrPlanes``), with the matrix libheif would have
    /// used: the nclx box's, or, without one, BT.601 at full range, libheif's default.
    struct PlanarDecode: Sendable, Hashable {
        /// 1: 4:2:0, 3: 4:4:4 (libheif's and H.265's numbering).
        var chroma: Int
        var matrixCoefficients: Int
        var fullRange: Bool
        var matrix: YCbCrMatrix? { YCbCrMatrix(matrixCoefficients: matrixCoefficients, fullRange: fullRange) }
    }

    /// What to ask libheif for: planes when every coded image of the primary image is 8-bit
    /// 4:2:0 or 4:4:4 HEVC (from their parameter sets, so libheif converts nothing), there is
    /// no alpha, no clean aperture and the matrix is a Kr/Kb weighting; otherwise nil, its
    /// interleaved RGB. Planes spare the decode libheif's RGB image (3 bytes a pixel, and in
    /// libheif 1.15 a 4:4:4 intermediate as large again). 4:2:2 stays with libheif: turned a
    /// quarter, its chroma would be subsampled vertically instead; so does a clean aperture,
    /// whose crop at an odd offset leaves 4:2:0 chroma that no longer starts on a sample.
    static func planarDecode(_ container: HEIFContainer, _ info: iec_heif_info) -> PlanarDecode? {
        guard info.has_alpha == 0, !container.cropsCleanAperture, let format = container.hevcFormat, format.lumaBits == 8,
            format.chromaBits == 8
        else { return nil }
        let chroma: Int
        switch format.chroma {
        case .subsampled420: chroma = 1
        case .full444: chroma = 3
        case .monochrome, .subsampled422, .separatePlanes: return nil
        }
        let decode =
            info.has_nclx != 0
            ? PlanarDecode(chroma: chroma, matrixCoefficients: Int(info.nclx_matrix), fullRange: info.nclx_full_range != 0)
            : PlanarDecode(chroma: chroma, matrixCoefficients: 6, fullRange: true)
        return decode.matrix == nil ? nil : decode
    }

    /// What libavif reports of an AVIF's coded image beyond the header: its size and samples a
    /// pixel, in quarters (12 for 4:4:4 or unknown, 6 for 4:2:0), for the plan; and its
    /// transformations, the clean aperture as a crop of it, then the orientation `irot` and
    /// `imir` come to.
    struct AVIFLayout: Sendable, Hashable {
        var codedWidth: Int
        var codedHeight: Int
        var quarterSamplesPerPixel: Int
        var cropX: Int
        var cropY: Int
        var cropWidth: Int
        var cropHeight: Int
        var orientation: ExifOrientation
    }

    /// Reads the header: the container walk, then the library's parse. HEIC keeps libheif's
    /// reader for the decode (it reads `bytes` in place, so a decode hands it the same bytes);
    /// AVIF keeps none.
    static func open(
        _ bytes: UnsafeRawBufferPointer, format: ImageFormat, limits: DecodingLimits
    ) throws(ImageCodecError) -> (HEIFReader?, ImageHeader, Layout) {
        // The container's shape first: the library never sees one that can crash or stall it.
        let container = try HEIFContainer(bytes, limits: limits)
        if format == .avif { return try openAVIF(bytes, container, limits: limits) }
        let reader = try HEIFReader(bytes: bytes, limits: limits)
        let info = reader.info
        let (width, height) = (Int(info.width), Int(info.height))
        let bits = info.luma_bits > 0 ? Int(info.luma_bits) : 8
        let header = try uprightHeader(
            format: format, width: width, height: height, hasAlpha: info.has_alpha != 0, bits: bits, container, limits: limits)
        let hasICCProfile = info.profile_kind == 1
        let layout = Layout(
            fileBytes: bytes.count, lumaBits: bits, hasICCProfile: hasICCProfile,
            premultipliedAlpha: info.has_alpha != 0 && info.premultiplied_alpha != 0,
            nclx: hasICCProfile ? .sRGB : NCLXProfile.verdict(primaries: Int(info.nclx_primaries), transfer: Int(info.nclx_transfer)),
            codedImages: container.codedImages, largestCodedPixels: container.largestCodedPixels,
            iccProfile: hasICCProfile ? container.iccProfile : nil, exif: container.exif,
            declaredSide: max(container.declaredWidth, container.declaredHeight), library: .libheif, planar: planarDecode(container, info))
        return (reader, header, layout)
    }

    private static func openAVIF(
        _ bytes: UnsafeRawBufferPointer, _ container: HEIFContainer, limits: DecodingLimits
    ) throws(ImageCodecError) -> (HEIFReader?, ImageHeader, Layout) {
        let info = try AVIFReader(bytes: bytes, limits: limits).info
        let (codedWidth, codedHeight) = (Int(info.width), Int(info.height))
        guard info.crop_valid != 0 else { throw .corruptData("AVIF: the clean aperture ('clap') is not a crop of the image") }
        let quarters =
            switch info.yuv_format {
            case 2: 8 // 4:2:2
            case 3: 6 // 4:2:0
            case 4: 4 // monochrome
            default: 12 // 4:4:4, or not known: the most
            }
        let avif = AVIFLayout(
            codedWidth: codedWidth, codedHeight: codedHeight, quarterSamplesPerPixel: quarters, cropX: Int(info.crop_x), cropY: Int(info.crop_y),
            cropWidth: Int(info.crop_width), cropHeight: Int(info.crop_height),
            orientation: ExifOrientation(heifRotation: Int(info.rotation), mirror: info.mirror < 0 ? nil : Int(info.mirror)))
        guard avif.cropX + avif.cropWidth <= codedWidth, avif.cropY + avif.cropHeight <= codedHeight else {
            throw .corruptData("AVIF: the clean aperture lies outside the \(codedWidth)×\(codedHeight) image")
        }
        let swaps = avif.orientation.swapsDimensions
        let header = try uprightHeader(
            format: .avif, width: swaps ? avif.cropHeight : avif.cropWidth,
            height: swaps ? avif.cropWidth : avif.cropHeight, hasAlpha: info.has_alpha != 0, bits: Int(info.depth),
            container, limits: limits)
        let hasICCProfile = info.has_icc != 0
        let layout = Layout(
            fileBytes: bytes.count, lumaBits: Int(info.depth), hasICCProfile: hasICCProfile, premultipliedAlpha: false,
            nclx: hasICCProfile
                ? .sRGB : NCLXProfile.verdict(primaries: Int(info.color_primaries), transfer: Int(info.transfer_characteristics)),
            codedImages: container.codedImages, largestCodedPixels: max(container.largestCodedPixels, codedWidth * codedHeight),
            iccProfile: hasICCProfile ? container.iccProfile : nil, exif: container.exif,
            declaredSide: max(container.declaredWidth, container.declaredHeight), library: .libavif(avif))
        return (nil, header, layout)
    }

    /// The header of the upright image the library reports, checked against the limits and
    /// against the walk's `ispe`: after a rotation and a clean aperture it is never more.
    private static func uprightHeader(
        format: ImageFormat, width: Int, height: Int, hasAlpha: Bool, bits: Int, _ container: HEIFContainer, limits: DecodingLimits
    ) throws(ImageCodecError) -> ImageHeader {
        guard width > 0, height > 0 else { throw .corruptData("the primary image has no size") }
        try limits.check(width: width, height: height)
        let declaredLong = max(container.declaredWidth, container.declaredHeight)
        guard max(width, height) <= declaredLong, width * height <= container.declaredWidth * container.declaredHeight else {
            throw .corruptData("the library reports \(width)×\(height) for a \(container.declaredWidth)×\(container.declaredHeight) image")
        }
        return ImageHeader(
            format: format, width: width, height: height, orientation: .up, hasAlpha: hasAlpha, bitDepth: bits, colorModel: .rgb,
            progressive: false)
    }

    /// The header and options the decode plans with, in the coordinates of the rows the library
    /// delivers: the upright image for libheif; for libavif the clean aperture as coded, whose
    /// orientation is always applied (a HEIF transformation is part of the image, unlike an
    /// EXIF orientation a caller may ignore).
    private static func stored(_ header: ImageHeader, _ layout: Layout, _ options: DecodingOptions) -> (ImageHeader, DecodingOptions) {
        guard case .libavif(let avif) = layout.library else { return (header, options) }
        var stored = header
        (stored.width, stored.height, stored.orientation) = (avif.cropWidth, avif.cropHeight, avif.orientation)
        var options = options
        options.appliesOrientation = true
        return (stored, options)
    }

    private static func setUp(
        _ header: ImageHeader, _ layout: Layout, options: DecodingOptions
    ) throws(ImageCodecError) -> (ImageHeader, DecodingOptions, ResizePlan, RowWindow, PixelFormat) {
        try options.limits.check(width: header.width, height: header.height)
        let (stored, options) = Self.stored(header, layout, options)
        let plan = try options.storedPlan(for: stored)
        let window = RowWindow(rowWidth: stored.width, rowCount: stored.height, crop: plan.crop)
        return (stored, options, plan, window, header.hasAlpha ? .rgba : .rgb)
    }

    /// What the library and its codec allocate for a decode.
    static func libraryBytes(_ header: ImageHeader, _ layout: Layout, channels: Int) -> Int {
        // A grid's canvas, or the largest coded image (a tile, an overlay's layer, the image
        // a clean aperture crops) if larger.
        let pixels = max(header.width * header.height, layout.largestCodedPixels)
        let deep = layout.lumaBits > 8
        switch layout.library {
        case .libheif:
            let planes = 3 + (header.hasAlpha ? 1 : 0)
            // The coded data gathered for the codec, the decoded Y, Cb, Cr (and alpha) planes (4:4:4 at worst), two
            // reference pictures in the codec, the interleaved 8-bit result (and, from more
            // than 8 bits, the deeper image it is converted from) or, decoding planes, the
            // engine's RGB row and chroma sums, and the codec's own state.
            let straightRow = layout.premultipliedAlpha ? header.width * channels : 0
            let result = layout.planar == nil ? pixels * channels * (deep ? 3 : 1) : header.width * (channels + 8)
            return layout.fileBytes + 3 * pixels * planes * (deep ? 2 : 1) + result + straightRow + (8 << 20)
        case .libavif(let avif):
            // Measured (peak RSS of libavif's avifdec, dav1d, one thread, over a tiny file's) on
            // a 9.4 MP photo: 1.57 bytes a pixel at 4:2:0 and 8 bits, 3.29 at 4:4:4, 3.30 at
            // 4:2:0 and 10 bits, 6.23 at 4:4:4 and 10 bits; 1.57-1.77 on 12-24 MP photos at 4:2:0.
            // That is dav1d's picture (the samples at one byte, two above 8 bits) and about 0.3
            // byte a pixel of its own state. Planned: each coded image's picture in turn (the
            // largest) twice, since dav1d applies film grain into a copy, a byte a pixel for
            // the state, alpha as a second monochrome picture, a grid's canvas (libavif copies
            // the tiles into it, at the same depth), the interleaved 8-bit image libavif
            // converts into, and the decoders' fixed state.
            let sample = deep ? 2 : 1
            let picture = 2 * avif.quarterSamplesPerPixel * sample * layout.largestCodedPixels / 4 + layout.largestCodedPixels
            let alpha = header.hasAlpha ? (2 * sample + 1) * layout.largestCodedPixels : 0
            let canvas = layout.codedImages > 1 ? avif.quarterSamplesPerPixel * sample * pixels / 4 + (header.hasAlpha ? sample * pixels : 0) : 0
            return picture + alpha + canvas + pixels * channels + (8 << 20)
        }
    }

    static func plan(_ header: ImageHeader, _ layout: Layout, heldBytes: Int, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let (stored, storedOptions, plan, window, format) = try setUp(header, layout, options: options)
        let memory =
            heldBytes + libraryBytes(header, layout, channels: format.channels)
            + RowSinks.plannedBytes(window: window, target: (plan.width, plan.height), format: format)
        var decodePlan = DecodePlan(
            header: stored, plan: plan, scaleNumerator: 8, decodeBytes: memory, channels: format.channels,
            options: storedOptions)
        decodePlan.header = header
        return decodePlan
    }

    /// Decodes with libheif's `reader` (HEIC), or with a libavif reader made here on `bytes`
    /// (AVIF, `reader` nil).
    static func decode(
        _ reader: HEIFReader?, _ bytes: UnsafeRawBufferPointer, _ header: ImageHeader, _ layout: Layout, options: DecodingOptions
    ) throws(ImageCodecError) -> DecodedImage {
        let (stored, storedOptions, plan, window, format) = try setUp(header, layout, options: options)
        var warnings: [DecodingWarning] = []
        // Within the limit: the container walk refused a larger profile before the library read it.
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
        let sink = try RowSinks.make(
            window: window, inputChannels: format.channels, target: (plan.width, plan.height), format: format,
            boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        switch (layout.library, reader) {
        case (.libavif(let avif), _):
            let reader = try AVIFReader(bytes: bytes, limits: options.limits)
            guard (Int(reader.info.width), Int(reader.info.height)) == (avif.codedWidth, avif.codedHeight) else {
                throw .corruptData("AVIF: the image changed between reads")
            }
            try reader.decode(channels: format.channels) { (pixels, stride) throws(ImageCodecError) in
                let first = pixels + avif.cropY * stride + avif.cropX * format.channels
                for y in 0..<avif.cropHeight { sink.consume(first + y * stride) }
            }
        case (.libheif, let reader?):
            if let planar = layout.planar, let matrix = planar.matrix {
                try decodePlanes(reader, header, layout, planar, matrix, options: options, into: sink, warnings: &warnings)
            } else {
                try decodeRows(reader, header, layout, format: format, options: options, into: sink, warnings: &warnings)
            }
        case (.libheif, nil):
            throw .corruptData("the HEIC header read left no reader")
        }
        let bitmap = Bitmap(
            unchecked: plan.width, height: plan.height, format: format, pixels: try sink.finish(), iccProfile: colorPlan.outputProfile)
        let upright = storedOptions.appliesOrientation && stored.orientation != .up ? try bitmap.applying(stored.orientation) : bitmap
        return DecodedImage(bitmap: upright, header: header, warnings: (colorPlan.warning.map { [$0] } ?? []) + warnings)
    }

    /// libheif's planes into `sink` as RGB rows: the decode, its warnings, the conversion.
    private static func decodePlanes(
        _ reader: HEIFReader, _ header: ImageHeader, _ layout: Layout, _ planar: PlanarDecode, _ matrix: YCbCrMatrix,
        options: DecodingOptions, into sink: some RowSink, warnings: inout [DecodingWarning]
    ) throws(ImageCodecError) {
        try reader.decodePlanes(chroma: planar.chroma, maxSide: layout.declaredSide + 1) {
            (planes, warning) throws(ImageCodecError) in
            try accept(warning, options: options, into: &warnings)
            try checkSize(planes.width, planes.height, header)
            try planes.convert(matrix, into: sink)
        }
    }

    /// What libheif papered over is damage: an error unless partial images are allowed.
    private static func accept(_ warning: String?, options: DecodingOptions, into warnings: inout [DecodingWarning]) throws(ImageCodecError) {
        guard let warning else { return }
        guard options.allowsPartialImages else { throw .corruptData(warning) }
        warnings.append(DecodingWarning(code: 0, message: warning))
    }

    private static func checkSize(_ width: Int, _ height: Int, _ header: ImageHeader) throws(ImageCodecError) {
        guard (width, height) == (header.width, header.height) else {
            throw .corruptData("libheif decoded \(width)×\(height), the header says \(header.width)×\(header.height)")
        }
    }

    /// libheif's rows into `sink`: the decode, its warnings, premultiplied alpha divided out.
    private static func decodeRows(
        _ reader: HEIFReader, _ header: ImageHeader, _ layout: Layout, format: PixelFormat, options: DecodingOptions,
        into sink: some RowSink, warnings: inout [DecodingWarning]
    ) throws(ImageCodecError) {
        // A derived image's canvas comes from its own item data, not from the size checked in
        // the header: it may not be longer on a side than the image it claims to be (its
        // `ispe`, which a clean aperture then crops).
        try reader.decode(channels: format.channels, maxSide: layout.declaredSide + 1) {
            (pixels, stride, width, height, warning) throws(ImageCodecError) in
            try accept(warning, options: options, into: &warnings)
            try checkSize(width, height, header)
            guard layout.premultipliedAlpha, format == .rgba else {
                for y in 0..<height { sink.consume(pixels + y * stride) }
                return
            }
            var straight = try ChargedArray<UInt8>(repeating: 0, count: width * 4)
            straight.elements.withUnsafeMutableBufferPointer { straight in
                for y in 0..<height {
                    Self.divideAlpha(pixels + y * stride, into: straight.baseAddress!, count: width)
                    sink.consume(straight.baseAddress!)
                }
            }
        }
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
