import CImageCodecShim

/// JPEG header probe and scaled decode on top of libjpeg-turbo.
enum JPEGDecoder {
    static func header(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) -> ImageHeader {
        let decompressor = try JPEGDecompressor(bytes: bytes, strict: true, limits: limits)
        try decompressor.readHeader()
        return header(of: decompressor)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImageCodecError) -> DecodedImage {
        let decompressor = try JPEGDecompressor(bytes: bytes, strict: !options.allowsPartialImages, limits: options.limits)
        try decompressor.readHeader()
        let header = header(of: decompressor)
        // Before jpeg_start_decompress: that is where a progressive JPEG allocates its
        // whole-image coefficient buffer.
        try options.limits.check(width: header.width, height: header.height)

        let info = decompressor.info
        let target = TargetSize.fitting(width: header.width, height: header.height, maxPixelSize: options.maxPixelSize)
        let tuning = options.tuning
        info.pointee.scale_num = UInt32(TargetSize.jpegScaleNumerator(width: header.width, height: header.height, target: target,
                                                                      headroom: tuning.dctHeadroom,
                                                                      powerOfTwoOnly: tuning.powerOfTwoScalesOnly))
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
        let format: PixelFormat = header.colorModel == .gray || lumaOnly ? .gray : .rgb
        // libjpeg's scaled size covers the target by construction; clamping guards the rest.
        let output = (width: min(target.width, scaled.width), height: min(target.height, scaled.height))
        let layout: ColorLayout = header.colorModel == .cmyk ? .cmyk(inverted: info.pointee.saw_Adobe_marker != 0) : ColorLayout(format)
        // Luma straight from the Y channel is for quality metrics, which compare like with like:
        // no colour management there.
        let plan = lumaOnly ? ColorPlan()
            : ColorPlan.make(profile: try decompressor.iccProfile(), layout: layout, management: options.colorManagement)
        let sink = RowSinks.make(source: scaled, target: output, format: format, boxPreReduction: tuning.boxPreReduction, plan: plan)

        try decompressor.startDecompress()
        try readRows(decompressor, width: scaled.width, height: scaled.height, into: sink)
        try decompressor.finishDecompress()
        if decompressor.sawTruncation && !options.allowsPartialImages { throw .truncatedData }

        let bitmap = Bitmap(unchecked: output.width, height: output.height, format: format,
                            pixels: try sink.finish(), iccProfile: plan.outputProfile)
        return DecodedImage(bitmap: options.appliesOrientation ? bitmap.applying(header.orientation) : bitmap, header: header,
                            warnings: decompressor.warnings + (plan.warning.map { [$0] } ?? []))
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
}
