import CImageCodecShim

/// PNG header probe and decode on top of libpng: every colour type, bit depths 1-16, palette,
/// tRNS and Adam7, always delivered as 8-bit gray, gray+alpha, RGB or RGBA.
enum PNGDecoder {
    static func header(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) -> ImageHeader {
        let reader = try PNGReader(bytes: bytes)
        return header(from: try reader.readHeader())
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImageCodecError) -> DecodedImage {
        let reader = try PNGReader(bytes: bytes)
        let raw = try reader.readHeader()
        let header = header(from: raw)
        try options.limits.check(width: header.width, height: header.height)
        let iccProfile = raw.icc_profile.map { Array(UnsafeBufferPointer(start: $0, count: Int(raw.icc_length))) }

        let layout = try reader.configureEightBitOutput()
        guard let format = PixelFormat(rawValue: Int(layout.channels)),
              layout.row_bytes == header.width * format.channels else {
            throw .corruptData("unexpected PNG row layout: \(layout.channels) channels, \(layout.row_bytes) bytes per row")
        }
        let target = TargetSize.fitting(width: header.width, height: header.height, maxPixelSize: options.maxPixelSize)
        let plan = ColorPlan.make(profile: iccProfile, layout: ColorLayout(format), management: options.colorManagement)
        let sink = RowSinks.make(source: (header.width, header.height), target: target, format: format,
                                 boxPreReduction: options.tuning.boxPreReduction, plan: plan)
        if layout.passes > 1 {
            try readInterlaced(reader, passes: Int(layout.passes), rowBytes: layout.row_bytes, height: header.height, into: sink)
        } else {
            try readSequential(reader, rowBytes: layout.row_bytes, height: header.height, into: sink)
        }
        var warnings = plan.warning.map { [$0] } ?? []
        do {
            try reader.readEnd()
        } catch {
            // Damage after the pixel data (a bad trailing chunk, missing IEND) does not change
            // the pixels, but a strict decoder still reports the file as broken.
            if !options.allowsPartialImages { throw error }
            warnings.append(DecodingWarning(code: 0, message: "after the pixel data: \(error)"))
        }
        let bitmap = Bitmap(unchecked: target.width, height: target.height, format: format,
                            pixels: try sink.finish(), iccProfile: plan.outputProfile)
        return DecodedImage(bitmap: options.appliesOrientation ? bitmap.applying(header.orientation) : bitmap, header: header,
                            warnings: warnings)
    }

    private static func header(from raw: iec_png_header) -> ImageHeader {
        let colorType = raw.color_type
        let model: ColorModel = switch colorType {
        case PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA: .gray
        case PNG_COLOR_TYPE_PALETTE: .palette
        default: .rgb
        }
        let orientation = raw.exif.flatMap { ExifReader.orientation(tiff: UnsafeBufferPointer(start: $0, count: Int(raw.exif_length))) }
        return ImageHeader(format: .png, width: Int(raw.width), height: Int(raw.height), orientation: orientation ?? .up,
                           hasAlpha: colorType & PNG_COLOR_MASK_ALPHA != 0 || raw.has_transparency_chunk != 0,
                           bitDepth: Int(raw.bit_depth), colorModel: model, progressive: raw.interlaced != 0)
    }

    /// Non-interlaced: one row in memory at a time, so memory follows the output size.
    private static func readSequential(_ reader: PNGReader, rowBytes: Int, height: Int, into sink: any RowSink) throws(ImageCodecError) {
        var row = [UInt8](repeating: 0, count: rowBytes)
        for _ in 0..<height {
            try row.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) in
                var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                try reader.readRows(&pointer, count: 1)
                sink.consume(buffer.baseAddress!)
            }
        }
    }

    /// Adam7 spreads every row over seven passes, so the whole image must be held while reading.
    private static func readInterlaced(_ reader: PNGReader, passes: Int, rowBytes: Int, height: Int,
                                       into sink: any RowSink) throws(ImageCodecError) {
        var image = [UInt8](repeating: 0, count: rowBytes * height)
        try image.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) in
            let base = buffer.baseAddress!
            var rows: [UnsafeMutablePointer<UInt8>?] = (0..<height).map { base + $0 * rowBytes }
            for _ in 0..<passes {
                try rows.withUnsafeMutableBufferPointer { (pointers) throws(ImageCodecError) in
                    try reader.readRows(pointers.baseAddress!, count: height)
                }
            }
            for y in 0..<height { sink.consume(base + y * rowBytes) }
        }
    }
}
