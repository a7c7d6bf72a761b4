import CImageCodecShim

/// PNG header probe and decode on top of libpng: every colour type, bit depths 1-16, palette,
/// tRNS and Adam7, always delivered as 8-bit gray, gray+alpha, RGB or RGBA.
enum PNGDecoder {
    /// A reader that has read the header (and the ICC profile, within its limit).
    static func open(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) -> (PNGReader, ImageHeader) {
        let chunks = try PNGChunkScan(bytes, limits: limits)
        let reader = try PNGReader(bytes: bytes, limits: limits)
        let raw = try reader.readHeader()
        let orientation = chunks.exif.flatMap { range in
            ExifReader.orientation(tiff: UnsafeRawBufferPointer(rebasing: bytes[range.prefix(limits.maxEXIFBytes)]))
        }
        return (reader, header(from: raw, orientation: orientation ?? .up))
    }

    /// A decode set up to the point where rows would be read, from the header alone.
    private struct Setup {
        /// In the stored orientation.
        let plan: ResizePlan
        let window: RowWindow
        let format: PixelFormat
        let passes: Int
        var rowBytes: Int { window.rowWidth * format.channels }
    }

    private static func setUp(_ header: ImageHeader, options: DecodingOptions) throws(ImageCodecError) -> Setup {
        try options.limits.check(width: header.width, height: header.height)
        let plan = try options.storedPlan(for: header)
        // What iec_png_configure_8bit makes of the file: palette and low depths expanded, tRNS
        // as alpha, 16 bits scaled to 8.
        let format: PixelFormat =
            switch (header.colorModel, header.hasAlpha) {
            case (.gray, false): .gray
            case (.gray, true): .grayAlpha
            case (_, false): .rgb
            case (_, true): .rgba
            }
        return Setup(
            plan: plan, window: RowWindow(rowWidth: header.width, rowCount: header.height, crop: plan.crop),
            format: format, passes: header.progressive ? 7 : 1)
    }

    /// What libpng allocates for a decode beyond the header read: the previous and current row
    /// at the stored depth (16 bits: twice the bytes) and zlib's inflate window and state.
    private static func libraryBytes(_ header: ImageHeader, _ setup: Setup) -> Int {
        let sourceRowBytes = setup.rowBytes * (header.bitDepth == 16 ? 2 : 1)
        return setup.rowBytes + 2 * sourceRowBytes + (64 << 10)
    }

    static func plan(_ header: ImageHeader, heldBytes: Int, options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let setup = try setUp(header, options: options)
        // An interlaced file needs the window's rows whole.
        var memory =
            heldBytes + libraryBytes(header, setup) + setup.rowBytes
            + RowSinks.plannedBytes(window: setup.window, target: (setup.plan.width, setup.plan.height), format: setup.format)
        if setup.passes > 1 { memory += setup.rowBytes * (setup.window.rows.count + 1) }
        return DecodePlan(
            header: header, plan: setup.plan, scaleNumerator: 8, decodeBytes: memory,
            channels: setup.format.channels, options: options)
    }

    static func decode(_ reader: PNGReader, _ header: ImageHeader, options: DecodingOptions) throws(ImageCodecError) -> DecodedImage {
        let setup = try setUp(header, options: options)
        let (plan, format) = (setup.plan, setup.format)
        let iccProfile = reader.iccProfile
        let layout = try reader.configureEightBitOutput()
        guard Int(layout.channels) == format.channels, layout.row_bytes == setup.rowBytes, Int(layout.passes) == setup.passes else {
            throw .corruptData("unexpected PNG row layout: \(layout.channels) channels, \(layout.row_bytes) bytes per row, \(layout.passes) passes")
        }
        let colorPlan = ColorPlan.make(profile: iccProfile, layout: ColorLayout(format), management: options.colorManagement)
        // Every row is inflated (zlib has no skipping), but only the crop's rows and columns reach
        // the resampler.
        let sink = try RowSinks.make(
            window: setup.window, inputChannels: format.channels, target: (plan.width, plan.height), format: format,
            boxPreReduction: options.tuning.boxPreReduction, plan: colorPlan)
        if setup.passes > 1 {
            try readInterlaced(
                reader, passes: setup.passes, rowBytes: setup.rowBytes, height: header.height, keeping: setup.window.rows,
                into: sink)
        } else {
            try readSequential(reader, rowBytes: setup.rowBytes, height: header.height, into: sink)
        }
        var warnings = (colorPlan.warning.map { [$0] } ?? []) + iccWarnings(reader, options.limits)
        do {
            try reader.readEnd()
        } catch {
            // Damage after the pixel data (a bad trailing chunk, missing IEND) does not change
            // the pixels, but a strict decoder still reports the file as broken.
            if !options.allowsPartialImages { throw error }
            warnings.append(DecodingWarning(code: 0, message: "after the pixel data: \(error)"))
        }
        let bitmap = Bitmap(
            unchecked: plan.width, height: plan.height, format: format,
            pixels: try sink.finish(), iccProfile: colorPlan.outputProfile)
        return DecodedImage(
            bitmap: options.appliesOrientation ? try bitmap.applying(header.orientation) : bitmap, header: header,
            warnings: warnings)
    }

    /// libpng drops an iCCP whose profile passes `maxICCProfileBytes` with a warning that
    /// names the limit ("exceeds application limits"): the image is then read as sRGB.
    private static func iccWarnings(_ reader: PNGReader, _ limits: DecodingLimits) -> [DecodingWarning] {
        reader.warnings.contains { $0.hasPrefix("iCCP") && $0.contains("exceeds application limits") } ? [ICCProfileLimit.warning(limits)] : []
    }

    private static func header(from raw: iec_png_header, orientation: ExifOrientation) -> ImageHeader {
        let colorType = raw.color_type
        let model: ColorModel =
            switch colorType {
            case PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA: .gray
            case PNG_COLOR_TYPE_PALETTE: .palette
            default: .rgb
            }
        return ImageHeader(
            format: .png, width: Int(raw.width), height: Int(raw.height), orientation: orientation,
            hasAlpha: colorType & PNG_COLOR_MASK_ALPHA != 0 || raw.has_transparency_chunk != 0,
            bitDepth: Int(raw.bit_depth), colorModel: model, progressive: raw.interlaced != 0)
    }

    /// Non-interlaced: one row in memory at a time, so memory follows the output size.
    private static func readSequential(_ reader: PNGReader, rowBytes: Int, height: Int, into sink: any RowSink) throws(ImageCodecError) {
        var row = try ChargedArray<UInt8>(repeating: 0, count: rowBytes)
        for y in 0..<height {
            if y % ImageCodecError.rowsBetweenCancellationChecks == 0 { try ImageCodecError.checkCancellation() }
            try row.elements.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) in
                var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                try reader.readRows(&pointer, count: 1)
                sink.consume(buffer.baseAddress!)
            }
        }
    }

    /// Adam7 spreads every row over seven passes, so the rows kept must be held whole while
    /// reading; rows outside `kept` all share one scratch row, which is never looked at.
    private static func readInterlaced(
        _ reader: PNGReader, passes: Int, rowBytes: Int, height: Int, keeping kept: Range<Int>,
        into sink: any RowSink
    ) throws(ImageCodecError) {
        var image = try ChargedArray<UInt8>(repeating: 0, count: rowBytes * (kept.count + 1))
        try image.elements.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) in
            let base = buffer.baseAddress!
            let scratch = base + kept.count * rowBytes
            var rows: [UnsafeMutablePointer<UInt8>?] = (0..<height).map { kept.contains($0) ? base + ($0 - kept.lowerBound) * rowBytes : scratch }
            for _ in 0..<passes {
                try ImageCodecError.checkCancellation()
                try rows.withUnsafeMutableBufferPointer { (pointers) throws(ImageCodecError) in
                    try reader.readRows(pointers.baseAddress!, count: height)
                }
            }
            // The sink expects every row of the image, in order; those outside `kept` it drops.
            for y in 0..<height { sink.consume(kept.contains(y) ? base + (y - kept.lowerBound) * rowBytes : scratch) }
        }
    }
}
