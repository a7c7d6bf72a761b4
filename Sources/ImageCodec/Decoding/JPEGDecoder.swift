import CImageCodecShim

/// JPEG header probe and scaled, cropped decode on top of libjpeg-turbo.
enum JPEGDecoder {
    static func header(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) -> ImageHeader {
        let decompressor = try JPEGDecompressor(bytes: bytes, strict: true, limits: limits)
        try decompressor.readHeader()
        return header(of: decompressor)
    }

    /// A decode set up to the point where pixels would be read: header read, size planned, DCT
    /// scale and output colour space chosen.
    private struct Setup {
        let decompressor: JPEGDecompressor
        let header: ImageHeader
        /// In the stored orientation.
        let plan: ResizePlan
        let numerator: Int
        /// The DCT-scaled size libjpeg would deliver, and the part of it the output shows.
        let window: RowWindow
        let format: PixelFormat
        let lumaOnly: Bool
    }

    private static func setUp(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImageCodecError) -> Setup {
        let decompressor = try JPEGDecompressor(bytes: bytes, strict: !options.allowsPartialImages, limits: options.limits)
        try decompressor.readHeader()
        let header = header(of: decompressor)
        // Before jpeg_start_decompress: that is where a progressive JPEG allocates its
        // whole-image coefficient buffer.
        try options.limits.check(width: header.width, height: header.height)
        let plan = try options.storedPlan(for: header)

        let info = decompressor.info
        let tuning = options.tuning
        let numerator = TargetSize.jpegScaleNumerator(crop: plan.crop, target: (plan.width, plan.height), headroom: tuning.dctHeadroom,
                                                      boxHeadroom: tuning.boxScaleHeadroom,
                                                      boxScales: tuning.libjpegReducedIDCT ? TargetSize.libjpegBoxScales : TargetSize.boxScales,
                                                      powerOfTwoOnly: tuning.powerOfTwoScalesOnly)
        info.pointee.scale_num = UInt32(numerator)
        info.pointee.scale_denom = 8
        info.pointee.do_fancy_upsampling = tuning.fancyUpsampling ? 1 : 0
        if tuning.fastIDCT { info.pointee.dct_method = JDCT_IFAST }
        // YCbCr → gray is the Y channel as stored; CMYK has no such shortcut (converted after).
        let lumaOnly = options.grayscale && header.colorModel == .rgb && info.pointee.jpeg_color_space == JCS_YCbCr
        info.pointee.out_color_space = switch header.colorModel {
        case .gray: JCS_GRAYSCALE
        case .cmyk: JCS_CMYK
        case .rgb, .palette: lumaOnly ? JCS_GRAYSCALE : JCS_RGB
        }
        try decompressor.calculateOutputDimensions()
        let scaled = (width: Int(info.pointee.output_width), height: Int(info.pointee.output_height))
        // The crop in DCT-scaled pixels: exactly M/8 of a stored pixel each. libjpeg rounds the
        // scaled size up (a 3837-row image at 4/8 has 1919 rows, the last one half outside the
        // image); taking 1919/3837 as the factor instead would stretch the image by up to a
        // scaled pixel, a sub-pixel shift growing across the image that cost Wine.jpg 0.002-0.005
        // SSIM at 4/8 and 5/8.
        let scale = Double(numerator) / 8
        let crop = plan.crop.scaled(scale, scale)
        return Setup(decompressor: decompressor, header: header, plan: plan, numerator: numerator,
                     window: RowWindow(rowWidth: scaled.width, rowCount: scaled.height, crop: crop),
                     format: header.colorModel == .gray || lumaOnly ? .gray : .rgb, lumaOnly: lumaOnly)
    }

    static func plan(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let setup = try setUp(bytes, options: options)
        let info = setup.decompressor.info.pointee
        let components = Int(info.num_components)
        var memory = setup.window.rowWidth * components                    // our scanline buffer
            + setup.window.rowWidth * components * Int(info.max_v_samp_factor) * 8 * 3  // libjpeg's sample rows
            + RowSinks.plannedBytes(window: setup.window, target: (setup.plan.width, setup.plan.height), format: setup.format)
        // Progressive (or otherwise multi-scan) files keep every DCT coefficient until the last scan.
        if info.progressive_mode != 0 || Int(info.comps_in_scan) < components {
            for index in 0..<components {
                let component = info.comp_info[index]
                let blocksWide = roundUp(Int(component.width_in_blocks), to: Int(component.h_samp_factor))
                let blocksHigh = roundUp(Int(component.height_in_blocks), to: Int(component.v_samp_factor))
                memory += blocksWide * blocksHigh * 64 * 2
            }
        }
        return DecodePlan(header: setup.header, plan: setup.plan, scaleNumerator: setup.numerator, decodeBytes: memory,
                          channels: setup.format.channels, appliesOrientation: options.appliesOrientation)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImageCodecError) -> DecodedImage {
        let setup = try setUp(bytes, options: options)
        let (decompressor, header, plan, window) = (setup.decompressor, setup.header, setup.plan, setup.window)
        let info = decompressor.info
        let layout: ColorLayout = header.colorModel == .cmyk ? .cmyk(inverted: info.pointee.saw_Adobe_marker != 0) : ColorLayout(setup.format)
        // Luma straight from the Y channel is for quality metrics, which compare like with like:
        // no colour management there.
        let colorPlan = setup.lumaOnly ? ColorPlan()
            : ColorPlan.make(profile: try decompressor.iccProfile(), layout: layout, management: options.colorManagement)

        try decompressor.startDecompress()
        // Crop while decoding: columns outside the iMCU-aligned span that covers the crop, and rows
        // above and below it, are never IDCT'd, upsampled or colour-converted. The rows below are
        // still skipped through rather than abandoned, so damage anywhere in the file is seen
        // whatever the crop (one file never decodes for one crop and fails for another).
        let columns = window.columns.count < window.rowWidth ? try decompressor.cropScanlines(to: cropSpan(window)) : 0..<window.rowWidth
        if !options.tuning.libjpegReducedIDCT { replaceReducedIDCTs(decompressor) }
        try decompressor.skipScanlines(window.rows.lowerBound)
        let delivered = RowWindow(rowWidth: columns.count, rowCount: window.rows.count,
                                  crop: window.crop.offset(by: columns.lowerBound - window.columns.lowerBound, 0))
        let sink = RowSinks.make(window: delivered, inputChannels: Int(info.pointee.output_components), target: (plan.width, plan.height),
                                 format: setup.format, boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        try readRows(decompressor, width: columns.count, height: window.rows.count, into: sink)
        try decompressor.skipScanlines(window.rowCount - window.rows.upperBound)
        try decompressor.finishDecompress()
        if decompressor.sawTruncation && !options.allowsPartialImages { throw .truncatedData }

        let bitmap = Bitmap(unchecked: plan.width, height: plan.height, format: setup.format,
                            pixels: try sink.finish(), iccProfile: colorPlan.outputProfile)
        return DecodedImage(bitmap: options.appliesOrientation ? bitmap.applying(header.orientation) : bitmap, header: header,
                            warnings: decompressor.warnings + (colorPlan.warning.map { [$0] } ?? []))
    }

    private static func header(of decompressor: JPEGDecompressor) -> ImageHeader {
        let info = decompressor.info.pointee
        let model: ColorModel = switch info.jpeg_color_space {
        case JCS_GRAYSCALE: .gray
        case JCS_CMYK, JCS_YCCK: .cmyk
        default: .rgb
        }
        return ImageHeader(format: .jpeg, width: Int(info.image_width), height: Int(info.image_height),
                           orientation: decompressor.exifOrientation() ?? .up, hasAlpha: false,
                           bitDepth: Int(info.data_precision), colorModel: model,
                           progressive: info.progressive_mode != 0)
    }

    /// The engine's low-pass IDCT for every component libjpeg decodes at 4×4 or 2×2 per block
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
    private static func readRows(_ decompressor: JPEGDecompressor, width: Int, height: Int,
                                 into sink: any RowSink) throws(ImageCodecError) {
        let components = Int(decompressor.info.pointee.output_components)
        var scanline = [UInt8](repeating: 0, count: width * components)
        var rowsDone = 0
        while rowsDone < height {
            let read = try scanline.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) -> Int in
                var row: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                return try decompressor.readScanlines(&row, count: 1)
            }
            guard read == 1 else { throw .corruptData("libjpeg returned no scanline at row \(rowsDone)") }
            scanline.withUnsafeBufferPointer { sink.consume($0.baseAddress!) }
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
