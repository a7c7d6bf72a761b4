import CImageCodecShim

/// JPEG header probe and scaled, cropped decode on top of libjpeg-turbo.
enum JPEGDecoder {
    /// A decompressor that has read the header, and what the plan needs of it.
    static func open(
        _ bytes: UnsafeRawBufferPointer, strict: Bool, limits: DecodingLimits
    ) throws(ImageCodecError) -> (JPEGDecompressor, ImageHeader, JPEGLayout) {
        let decompressor = try JPEGDecompressor(bytes: bytes, strict: strict, limits: limits)
        try decompressor.readHeader()
        return (decompressor, header(of: decompressor), JPEGLayout(decompressor.info.pointee))
    }

    /// A decode set up to the point where pixels would be read: size planned, DCT scale and
    /// output colour space chosen. Computed from the header alone, so planning needs no reader.
    private struct Setup {
        /// In the stored orientation.
        let plan: ResizePlan
        let numerator: Int
        /// The DCT-scaled size libjpeg will deliver, and the part of it the output shows.
        let window: RowWindow
        let format: PixelFormat
        let lumaOnly: Bool
    }

    private static func setUp(_ header: ImageHeader, _ layout: JPEGLayout, options: DecodingOptions) throws(ImageCodecError) -> Setup {
        // Before jpeg_start_decompress: that is where a progressive JPEG allocates its
        // whole-image coefficient buffer.
        try options.limits.check(width: header.width, height: header.height)
        let plan = try options.storedPlan(for: header)
        let tuning = options.tuning
        // Fast shrink-on-load: the smallest scale that still covers the target, as the field
        // does by default; the quality rule leaves headroom to Lanczos.
        let numerator = TargetSize.jpegScaleNumerator(
            crop: plan.crop, target: (plan.width, plan.height), headroom: options.fastShrinkOnLoad ? 1 : tuning.dctHeadroom,
            boxHeadroom: options.fastShrinkOnLoad ? 1 : tuning.boxScaleHeadroom,
            boxScales: tuning.libjpegReducedIDCT ? TargetSize.libjpegBoxScales : TargetSize.boxScales,
            powerOfTwoOnly: tuning.powerOfTwoScalesOnly)
        // YCbCr → gray is the Y channel as stored; CMYK has no such shortcut (converted after).
        let lumaOnly = options.grayscale && header.colorModel == .rgb && layout.isYCbCr
        // libjpeg's jpeg_calc_output_dimensions: the scaled size, rounded up.
        let scaled = (width: (header.width * numerator + 7) / 8, height: (header.height * numerator + 7) / 8)
        // The crop in DCT-scaled pixels: exactly M/8 of a stored pixel each. libjpeg rounds the
        // scaled size up (a 3837-row image at 4/8 has 1919 rows, the last one half outside the
        // image); taking 1919/3837 as the factor instead would stretch the image by up to a
        // scaled pixel, a sub-pixel shift growing across the image that cost Wine.jpg 0.002-0.005
        // SSIM at 4/8 and 5/8.
        let scale = Double(numerator) / 8
        let crop = plan.crop.scaled(scale, scale)
        return Setup(
            plan: plan, numerator: numerator, window: RowWindow(rowWidth: scaled.width, rowCount: scaled.height, crop: crop),
            format: header.colorModel == .gray || lumaOnly ? .gray : .rgb, lumaOnly: lumaOnly)
    }

    /// Sets the decompressor's output parameters for `setup` and checks that libjpeg agrees on
    /// the scaled size the plan was made for.
    private static func configure(
        _ decompressor: JPEGDecompressor, _ header: ImageHeader, _ setup: Setup,
        tuning: DecodingTuning
    ) throws(ImageCodecError) {
        let info = decompressor.info
        info.pointee.scale_num = UInt32(setup.numerator)
        info.pointee.scale_denom = 8
        info.pointee.do_fancy_upsampling = tuning.fancyUpsampling ? 1 : 0
        info.pointee.dct_method = tuning.fastIDCT ? JDCT_IFAST : JDCT_ISLOW
        info.pointee.out_color_space =
            switch header.colorModel {
            case .gray: JCS_GRAYSCALE
            case .cmyk: JCS_CMYK
            case .rgb, .palette: setup.lumaOnly ? JCS_GRAYSCALE : JCS_RGB
            }
        try decompressor.calculateOutputDimensions()
        guard Int(info.pointee.output_width) == setup.window.rowWidth, Int(info.pointee.output_height) == setup.window.rowCount else {
            throw .corruptData(
                "libjpeg scales to \(info.pointee.output_width)×\(info.pointee.output_height), not the planned "
                    + "\(setup.window.rowWidth)×\(setup.window.rowCount)")
        }
    }

    /// What libjpeg allocates for a decode at `setup` beyond the header read: its sample rows,
    /// and a progressive or multi-scan file's whole-image coefficient buffer.
    private static func libraryBytes(_ layout: JPEGLayout, _ setup: Setup) -> Int {
        var memory = setup.window.rowWidth * layout.components.count * layout.maxVerticalSampling * 8 * 3
        // Progressive (or otherwise multi-scan) files keep every DCT coefficient until the last scan.
        if layout.isMultiScan {
            for component in layout.components {
                let blocksWide = roundUp(component.widthInBlocks, to: component.horizontalSampling)
                let blocksHigh = roundUp(component.heightInBlocks, to: component.verticalSampling)
                memory += blocksWide * blocksHigh * 64 * 2
            }
        }
        return memory
    }

    static func plan(_ header: ImageHeader, _ layout: JPEGLayout, heldBytes: Int, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let setup = try setUp(header, layout, options: options)
        let memory =
            heldBytes + libraryBytes(layout, setup)
            + setup.window.rowWidth * layout.components.count // our scanline buffer
            + RowSinks.plannedBytes(window: setup.window, target: (setup.plan.width, setup.plan.height), format: setup.format)
        return DecodePlan(
            header: header, plan: setup.plan, scaleNumerator: setup.numerator, decodeBytes: memory,
            channels: setup.format.channels, options: options)
    }

    static func decode(
        _ decompressor: JPEGDecompressor, _ header: ImageHeader, _ layout: JPEGLayout,
        options: DecodingOptions
    ) throws(ImageCodecError) -> DecodedImage {
        let setup = try setUp(header, layout, options: options)
        let (plan, window) = (setup.plan, setup.window)
        decompressor.setStrict(!options.allowsPartialImages)
        if options.tuning.libjpegEntropyDecoders { decompressor.useLibraryEntropyDecoders() }
        try configure(decompressor, header, setup, tuning: options.tuning)
        let info = decompressor.info
        let colorLayout: ColorLayout = header.colorModel == .cmyk ? .cmyk(inverted: info.pointee.saw_Adobe_marker != 0) : ColorLayout(setup.format)
        // Luma straight from the Y channel is for quality metrics, which compare like with like:
        // no colour management there.
        let colorPlan =
            setup.lumaOnly
            ? ColorPlan()
            : ColorPlan.make(profile: try iccProfile(decompressor), layout: colorLayout, management: options.colorManagement)

        try decompressor.startDecompress()
        // Crop while decoding: columns outside the iMCU-aligned span that covers the crop, and rows
        // above and below it, are never IDCT'd, upsampled or colour-converted. The rows below are
        // still skipped through rather than abandoned, so damage anywhere in the file is seen
        // whatever the crop (one file never decodes for one crop and fails for another).
        let columns = window.columns.count < window.rowWidth ? try decompressor.cropScanlines(to: cropSpan(window)) : 0..<window.rowWidth
        if !options.tuning.libjpegReducedIDCT { replaceReducedIDCTs(decompressor) }
        try decompressor.skipScanlines(window.rows.lowerBound)
        let delivered = RowWindow(
            rowWidth: columns.count, rowCount: window.rows.count,
            crop: window.crop.offset(by: columns.lowerBound - window.columns.lowerBound, 0))
        let sink = try RowSinks.make(
            window: delivered, inputChannels: Int(info.pointee.output_components), target: (plan.width, plan.height),
            format: setup.format, boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        try readRows(decompressor, width: columns.count, height: window.rows.count, into: sink)
        try decompressor.skipScanlines(window.rowCount - window.rows.upperBound)
        try decompressor.finishDecompress()
        if decompressor.sawTruncation && !options.allowsPartialImages { throw .truncatedData }

        let bitmap = Bitmap(
            unchecked: plan.width, height: plan.height, format: setup.format,
            pixels: try sink.finish(), iccProfile: colorPlan.outputProfile)
        var warnings = decompressor.warnings + (colorPlan.warning.map { [$0] } ?? [])
        if decompressor.iccProfileDropped { warnings.append(ICCProfileLimit.warning(options.limits)) }
        return DecodedImage(
            bitmap: options.appliesOrientation ? try bitmap.applying(header.orientation) : bitmap, header: header,
            warnings: warnings)
    }

    /// The ICC profile the APP2 chunks hold, unless they passed `maxICCProfileBytes` (then the
    /// image is read as sRGB, with a warning).
    private static func iccProfile(_ decompressor: JPEGDecompressor) throws(ImageCodecError) -> [UInt8]? {
        decompressor.iccProfileDropped ? nil : try decompressor.iccProfile()
    }

    private static func header(of decompressor: JPEGDecompressor) -> ImageHeader {
        let info = decompressor.info.pointee
        let model: ColorModel =
            switch info.jpeg_color_space {
            case JCS_GRAYSCALE: .gray
            case JCS_CMYK, JCS_YCCK: .cmyk
            default: .rgb
            }
        return ImageHeader(
            format: .jpeg, width: Int(info.image_width), height: Int(info.image_height),
            orientation: decompressor.exifOrientation() ?? .up, hasAlpha: false,
            bitDepth: Int(info.data_precision), colorModel: model,
            progressive: info.progressive_mode != 0)
    }

    /// The engine's IDCT for every component libjpeg decodes at a reduced scale other than 1/8
    /// (`ReducedScaleIDCT`). Before the first row is read or skipped: libjpeg chose its own
    /// methods in jpeg_start_decompress and reads them again for every iMCU row.
    ///
    /// A component without a quantization table by now (a multi-scan file was read whole in
    /// jpeg_start_decompress) has no data at all, which only a partial decode accepts: libjpeg's
    /// own IDCT then makes it flat, so it keeps that one.
    private static func replaceReducedIDCTs(_ decompressor: JPEGDecompressor) {
        let info = decompressor.info.pointee
        guard info.data_precision == 8 else { return }
        for index in 0..<Int(info.num_components) {
            guard let method = ReducedScaleIDCT.method(scaledSize: Int(info.comp_info[index].DCT_scaled_size)) else { continue }
            _ = decompressor.replaceIDCT(component: index, with: method)
        }
    }

    /// Streams scanlines into the sink.
    private static func readRows(
        _ decompressor: JPEGDecompressor, width: Int, height: Int,
        into sink: any RowSink
    ) throws(ImageCodecError) {
        let components = Int(decompressor.info.pointee.output_components)
        var scanline = try ChargedArray<UInt8>(repeating: 0, count: width * components)
        var rowsDone = 0
        while rowsDone < height {
            let read = try scanline.elements.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) -> Int in
                var row: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                return try decompressor.readScanlines(&row, count: 1)
            }
            guard read == 1 else { throw .corruptData("libjpeg returned no scanline at row \(rowsDone)") }
            scanline.elements.withUnsafeBufferPointer { sink.consume($0.baseAddress!) }
            rowsDone += 1
        }
    }

    /// The columns to ask libjpeg for: the window's, and 16 more on each side where the image
    /// has them (at least one chroma sample at any subsampling). libjpeg widens the span to
    /// whole iMCUs on the left only, and its fancy (triangle) chroma upsampling replicates the
    /// span's edge samples instead of reading their neighbours; with the margin, every column
    /// the resampler uses is exactly what a full decode gives.
    private static func cropSpan(_ window: RowWindow) -> Range<Int> {
        let margin = 16
        return max(0, window.columns.lowerBound - margin)..<min(window.rowWidth, window.columns.upperBound + margin)
    }

    private static func roundUp(_ value: Int, to multiple: Int) -> Int {
        multiple > 1 ? (value + multiple - 1) / multiple * multiple : value
    }
}
