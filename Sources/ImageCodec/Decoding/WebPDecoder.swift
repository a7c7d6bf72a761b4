import CImageCodecShim

/// WebP header probe and decode on top of libwebp: lossy, lossless, alpha, and an animation's
/// first frame (placed on its canvas), delivered as 8-bit RGB or RGBA; ICC profiles through the
/// engine's colour management, EXIF orientation applied.
///
/// libwebp decodes straight to a reduced size with its area-averaging rescaler; like the
/// coarse JPEG scales (also box filters), it stops at ``DecodingTuning/boxScaleHeadroom`` (2×)
/// above the target and Lanczos does the rest, unless ``DecodingOptions/fastShrinkOnLoad``.
///
/// Memory: libwebp has no allocator hook, so unlike libjpeg and libpng its allocations cannot be
/// capped at the plan. The plan counts what libwebp's decoders allocate for the declared size
/// (a lossless image's whole ARGB buffer, an alpha plane, the lossy decoder's row caches), and
/// the header limits bound that size before libwebp is called.
enum WebPDecoder {
    /// What the plan and the decode need beyond the header.
    struct Layout: Sendable, Hashable {
        var container: WebPContainer
        /// The first image's bitstream: its size, whether it is lossless and has alpha.
        var bitstreamWidth: Int
        var bitstreamHeight: Int
        var isLossless: Bool
        var bitstreamHasAlpha: Bool
    }

    static func open(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) -> (ImageHeader, Layout) {
        var container = try WebPContainer(bytes)
        let bitstream = UnsafeRawBufferPointer(rebasing: bytes[container.bitstream])
        var features = iec_webp_features()
        var message = ShimMessage.buffer()
        try check(
            iec_webp_get_features(bitstream.baseAddress?.assumingMemoryBound(to: UInt8.self), bitstream.count, &features, &message),
            message)
        let (width, height) = (Int(features.width), Int(features.height))
        if container.isAnimated {
            guard width == container.frameWidth, height == container.frameHeight else {
                throw .corruptData(
                    "the first frame's bitstream is \(width)×\(height), its ANMF chunk says \(container.frameWidth)×\(container.frameHeight)")
            }
        } else {
            // A still image is its bitstream; a VP8X canvas must agree with it.
            if container.canvasWidth != 0, (container.canvasWidth, container.canvasHeight) != (width, height) {
                throw .corruptData("the VP8X canvas is \(container.canvasWidth)×\(container.canvasHeight), the image \(width)×\(height)")
            }
            (container.canvasWidth, container.canvasHeight) = (width, height)
            (container.frameWidth, container.frameHeight) = (width, height)
        }
        try limits.check(width: container.canvasWidth, height: container.canvasHeight)
        let orientation = container.exif.flatMap { range in
            exifOrientation(UnsafeRawBufferPointer(rebasing: bytes[range.prefix(limits.maxEXIFBytes)]))
        }
        let layout = Layout(
            container: container, bitstreamWidth: width, bitstreamHeight: height, isLossless: features.format == 2,
            bitstreamHasAlpha: features.has_alpha != 0)
        let header = ImageHeader(
            format: .webp, width: container.canvasWidth, height: container.canvasHeight, orientation: orientation ?? .up,
            hasAlpha: layout.bitstreamHasAlpha || container.declaresAlpha || !layout.coversCanvas, bitDepth: 8, colorModel: .rgb,
            progressive: false, frameCount: container.frameCount)
        return (header, layout)
    }

    /// The EXIF chunk holds the TIFF block; some writers keep JPEG's "Exif\0\0" in front of it.
    private static func exifOrientation(_ bytes: UnsafeRawBufferPointer) -> ExifOrientation? {
        ExifReader.orientation(app1: bytes) ?? ExifReader.orientation(tiff: bytes)
    }

    /// A decode set up from the header alone.
    private struct Setup {
        /// In the stored orientation.
        let plan: ResizePlan
        /// What libwebp delivers: the bitstream at this size.
        let decodedWidth: Int
        let decodedHeight: Int
        /// The canvas rows (at the decoded scale) and the part the output shows.
        let window: RowWindow
        let format: PixelFormat
        var decodedRowBytes: Int { decodedWidth * format.channels }
        /// libwebp's output is the result as it is: full size, whole canvas, no profile to
        /// convert. It becomes the bitmap without passing through the resampler or a copy.
        var passesThrough: Bool
    }

    private static func setUp(_ header: ImageHeader, _ layout: Layout, options: DecodingOptions) throws(ImageCodecError) -> Setup {
        try options.limits.check(width: header.width, height: header.height)
        let plan = try options.storedPlan(for: header)
        let format: PixelFormat = header.hasAlpha ? .rgba : .rgb
        var (width, height) = (layout.bitstreamWidth, layout.bitstreamHeight)
        // Only a bitstream that is the whole canvas is scaled: a partial frame keeps its place.
        if layout.coversCanvas {
            let headroom = options.fastShrinkOnLoad ? 1 : options.tuning.boxScaleHeadroom
            let scale = TargetSize.webpScale(crop: plan.crop, target: (plan.width, plan.height), headroom: headroom)
            if scale < 1 {
                width = max(1, Int((Double(width) * scale).rounded(.up)))
                height = max(1, Int((Double(height) * scale).rounded(.up)))
            }
        }
        let (sx, sy) = (Double(width) / Double(layout.bitstreamWidth), Double(height) / Double(layout.bitstreamHeight))
        let canvas = layout.coversCanvas ? (width, height) : (header.width, header.height)
        let window = RowWindow(rowWidth: canvas.0, rowCount: canvas.1, crop: plan.crop.scaled(sx, sy))
        return Setup(
            plan: plan, decodedWidth: width, decodedHeight: height, window: window, format: format,
            passesThrough: layout.coversCanvas && layout.container.iccProfile == nil && window.passesEverything
                && window.copies(to: (plan.width, plan.height)))
    }

    /// What libwebp allocates for a decode beyond the output buffer: a lossless image's ARGB
    /// pixels and row cache, an alpha plane (and, when it is lossless-coded, its 8-bit buffer),
    /// the lossy decoder's macroblock rows and the rescaler's rows.
    private static func libraryBytes(_ layout: Layout, _ setup: Setup) -> Int {
        let (width, height) = (layout.bitstreamWidth, layout.bitstreamHeight)
        var bytes = 256 << 10 + 2 * setup.decodedWidth * 4 * MemoryLayout<UInt32>.stride
        if layout.isLossless {
            bytes += (width * height + 32 * width) * 4
        } else {
            bytes += width * 64 * 3
            if layout.bitstreamHasAlpha { bytes += 2 * width * height }
        }
        return bytes
    }

    static func plan(_ header: ImageHeader, _ layout: Layout, heldBytes: Int, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let setup = try setUp(header, layout, options: options)
        let canvasRow = layout.coversCanvas ? 0 : setup.window.rowWidth * setup.format.channels
        let sink =
            setup.passesThrough
            ? 0 : RowSinks.plannedBytes(window: setup.window, target: (setup.plan.width, setup.plan.height), format: setup.format)
        let memory = heldBytes + libraryBytes(layout, setup) + setup.decodedRowBytes * setup.decodedHeight + canvasRow + sink
        return DecodePlan(
            header: header, plan: setup.plan, scaleNumerator: 8, decodeBytes: memory, channels: setup.format.channels,
            options: options)
    }

    static func decode(
        _ bytes: UnsafeRawBufferPointer, _ header: ImageHeader, _ layout: Layout, options: DecodingOptions
    ) throws(ImageCodecError) -> DecodedImage {
        let setup = try setUp(header, layout, options: options)
        let (plan, format) = (setup.plan, setup.format)
        var decoded = try ChargedArray<UInt8>(repeating: 0, count: setup.decodedRowBytes * setup.decodedHeight)
        var message = ShimMessage.buffer()
        let bitstream = UnsafeRawBufferPointer(rebasing: bytes[layout.container.bitstream])
        let status = decoded.elements.withUnsafeMutableBufferPointer { output in
            iec_webp_decode(
                bitstream.baseAddress?.assumingMemoryBound(to: UInt8.self), bitstream.count, Int32(format.channels),
                Int32(setup.decodedWidth), Int32(setup.decodedHeight), output.baseAddress, setup.decodedRowBytes,
                ImageCodecError.stopProbe, &message)
        }
        try check(status, message)
        if setup.passesThrough {
            let bitmap = Bitmap(unchecked: plan.width, height: plan.height, format: format, pixels: decoded)
            return DecodedImage(bitmap: options.appliesOrientation ? try bitmap.applying(header.orientation) : bitmap, header: header)
        }
        let profile = layout.container.iccProfile.flatMap { range in
            range.count <= options.limits.maxICCProfileBytes ? Array(bytes[range]) : nil
        }
        let tooLarge = layout.container.iccProfile.map { $0.count > options.limits.maxICCProfileBytes } ?? false
        let colorPlan = ColorPlan.make(profile: profile, layout: ColorLayout(format), management: options.colorManagement)
        let sink = try RowSinks.make(
            window: setup.window, inputChannels: format.channels, target: (plan.width, plan.height), format: format,
            boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        try decoded.elements.withUnsafeBufferPointer { (pixels) throws(ImageCodecError) in
            if layout.coversCanvas {
                for y in 0..<setup.decodedHeight { sink.consume(pixels.baseAddress! + y * setup.decodedRowBytes) }
            } else {
                try feedCanvas(pixels, layout, setup, into: sink)
            }
        }
        let bitmap = Bitmap(
            unchecked: plan.width, height: plan.height, format: format, pixels: try sink.finish(), iccProfile: colorPlan.outputProfile)
        let warnings = (colorPlan.warning.map { [$0] } ?? []) + (tooLarge ? [ICCProfileLimit.warning(options.limits)] : [])
        return DecodedImage(
            bitmap: options.appliesOrientation ? try bitmap.applying(header.orientation) : bitmap, header: header, warnings: warnings)
    }

    /// An animation's first frame on its canvas: transparent where the frame does not reach.
    private static func feedCanvas(
        _ frame: UnsafeBufferPointer<UInt8>, _ layout: Layout, _ setup: Setup, into sink: any RowSink
    ) throws(ImageCodecError) {
        let channels = setup.format.channels
        let container = layout.container
        var row = try ChargedArray<UInt8>(repeating: 0, count: setup.window.rowWidth * channels)
        row.elements.withUnsafeMutableBufferPointer { canvasRow in
            for y in 0..<setup.window.rowCount {
                let frameRow = y - container.frameY
                if (0..<setup.decodedHeight).contains(frameRow) {
                    let source = frame.baseAddress! + frameRow * setup.decodedRowBytes
                    (canvasRow.baseAddress! + container.frameX * channels).update(from: source, count: setup.decodedRowBytes)
                    sink.consume(canvasRow.baseAddress!)
                    (canvasRow.baseAddress! + container.frameX * channels).update(repeating: 0, count: setup.decodedRowBytes)
                } else {
                    sink.consume(canvasRow.baseAddress!)
                }
            }
        }
    }

    private static func check(_ status: iec_status, _ message: [CChar]) throws(ImageCodecError) {
        guard status == IEC_OK else {
            throw ImageCodecError(shimStatus: status, message: message.shimMessage, variant: ImageCodecError.UnsupportedFormat.webpVariant)
        }
    }
}

extension WebPDecoder.Layout {
    /// True when the first image fills the canvas (every still image; most animations).
    var coversCanvas: Bool {
        container.frameX == 0 && container.frameY == 0 && bitstreamWidth == container.canvasWidth
            && bitstreamHeight == container.canvasHeight
    }
}
