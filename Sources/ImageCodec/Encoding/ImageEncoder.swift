import CImageCodecShim
import Foundation

/// Encodes bitmaps as JPEG, PNG, WebP or AVIF. Outputs carry no EXIF unless the caller passes
/// ``ImageMetadata`` (by default none: these are often uploads, so no GPS, no camera serials).
/// A bitmap's ICC profile is written when it has one and the options keep it; decoded bitmaps
/// have none unless decoded with `.preserveSource`.
public enum ImageEncoder {
    /// Encodes as JPEG; alpha is composited over `options.background` first. `metadata` is
    /// written as an APP1 segment (`invalidArgument` for a block ``ImageMetadata`` would not
    /// write).
    public static func jpeg(
        _ bitmap: Bitmap, options: JPEGEncodingOptions = JPEGEncodingOptions(), metadata: ImageMetadata = .none
    ) throws(ImageCodecError) -> Data {
        try metadata.validate()
        return try metadata.written(intoJPEG: jpeg(bitmap, options: options, maximumOutputBytes: 0))
    }

    /// `maximumOutputBytes` (0: none) makes the encoder's output buffer unable to grow past it,
    /// which takes the same path as a failed allocation: how tests reach that path.
    static func jpeg(_ bitmap: Bitmap, options: JPEGEncodingOptions, maximumOutputBytes: Int) throws(ImageCodecError) -> Data {
        try checkJPEG(bitmap, options)
        let opaque = try bitmap.flattened(over: options.background)
        if options.encoder == .perceptual {
            return try PerceptualJPEGEncoder.encode(
                opaque, options: options, tuning: .standard, maximumOutputBytes: maximumOutputBytes)
        }
        let (hSamp, vSamp) = options.chromaSubsampling.lumaSamplingFactors
        let profile = options.preservesICCProfile ? opaque.iccProfile ?? [] : []
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        var message = ShimMessage.buffer()
        let table = options.quantization.lumaTable ?? []
        let status = opaque.pixels.withUnsafeBufferPointer { pixels in
            profile.withUnsafeBufferPointer { icc in
                table.withUnsafeBufferPointer { table in
                    var parameters = iec_jpeg_encode_params(
                        width: UInt32(opaque.width), height: UInt32(opaque.height), components: Int32(opaque.format.channels),
                        quality: Int32(options.quality), chroma_quality: Int32(options.chromaQuality ?? 0),
                        optimize_coding: options.optimizesHuffmanCoding ? 1 : 0,
                        progressive: options.progressive ? 1 : 0, luma_h_samp: Int32(hSamp), luma_v_samp: Int32(vSamp),
                        icc_profile: icc.baseAddress, icc_length: UInt32(icc.count),
                        luma_quant_table: table.isEmpty ? nil : table.baseAddress, max_output_bytes: maximumOutputBytes,
                        stop: ImageCodecError.stopProbe)
                    return iec_jpeg_encode(&parameters, pixels.baseAddress, opaque.bytesPerRow, &output, &length, &message)
                }
            }
        }
        return try takeOutput(status: status, output: output, length: Int(length), message: message)
    }

    /// The settings and sizes a JPEG can be written with, checked before any work.
    private static func checkJPEG(_ bitmap: Bitmap, _ options: JPEGEncodingOptions) throws(ImageCodecError) {
        guard (1...100).contains(options.quality) else {
            throw .invalidArgument("JPEG quality must be 1...100, got \(options.quality)")
        }
        guard options.qualityFraction >= 0, options.qualityFraction < 1, Double(options.quality) + options.qualityFraction <= 100 else {
            throw .invalidArgument("JPEG quality fraction must be in 0..<1 with the quality at most 100, got \(options.qualityFraction)")
        }
        if let chroma = options.chromaQuality, !(1...100).contains(chroma) {
            throw .invalidArgument("JPEG chroma quality must be 1...100, got \(chroma)")
        }
        // libjpeg's JPEG_MAX_DIMENSION: the format's 16-bit fields would allow 65535.
        guard bitmap.width <= maximumJPEGSide, bitmap.height <= maximumJPEGSide else {
            throw .invalidArgument("a JPEG may be at most \(maximumJPEGSide) pixels a side, got \(bitmap.width)×\(bitmap.height)")
        }
    }

    /// The longest side libjpeg writes.
    public static let maximumJPEGSide = 65500

    /// The perceptual encoder with other constants than the engine's: for the benchmark that
    /// fits them.
    @_spi(Tuning) public static func jpeg(
        _ bitmap: Bitmap, options: JPEGEncodingOptions, tuning: PerceptualJPEGTuning
    ) throws(ImageCodecError) -> Data {
        try checkJPEG(bitmap, options)
        return try PerceptualJPEGEncoder.encode(
            try bitmap.flattened(over: options.background), options: options, tuning: tuning, maximumOutputBytes: 0)
    }

    /// Encodes as 8-bit PNG in the bitmap's own pixel format (gray, gray+alpha, RGB, RGBA).
    /// `metadata` is written as an `eXIf` chunk.
    public static func png(
        _ bitmap: Bitmap, options: PNGEncodingOptions = PNGEncodingOptions(), metadata: ImageMetadata = .none
    ) throws(ImageCodecError) -> Data {
        try metadata.validate()
        return try metadata.written(intoPNG: png(bitmap, options: options, maximumOutputBytes: 0))
    }

    /// See `jpeg(_:options:maximumOutputBytes:)`.
    static func png(_ bitmap: Bitmap, options: PNGEncodingOptions, maximumOutputBytes: Int) throws(ImageCodecError) -> Data {
        guard (0...9).contains(options.compressionLevel) else {
            throw .invalidArgument("PNG compression level must be 0...9, got \(options.compressionLevel)")
        }
        let colorType: Int32 =
            switch bitmap.format {
            case .gray: PNG_COLOR_TYPE_GRAY
            case .grayAlpha: PNG_COLOR_TYPE_GRAY_ALPHA
            case .rgb: PNG_COLOR_TYPE_RGB
            case .rgba: PNG_COLOR_TYPE_RGB_ALPHA
            }
        let profile = options.preservesICCProfile ? bitmap.iccProfile ?? [] : []
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = ShimMessage.buffer()
        let status = bitmap.pixels.withUnsafeBufferPointer { pixels in
            profile.withUnsafeBufferPointer { icc in
                var parameters = iec_png_encode_params(
                    width: UInt32(bitmap.width), height: UInt32(bitmap.height), color_type: colorType,
                    compression_level: Int32(options.compressionLevel), icc_profile: icc.baseAddress,
                    icc_length: UInt32(icc.count), max_output_bytes: maximumOutputBytes, stop: ImageCodecError.stopProbe)
                return iec_png_encode(&parameters, pixels.baseAddress, bitmap.bytesPerRow, &output, &length, &message)
            }
        }
        return try takeOutput(status: status, output: output, length: length, message: message)
    }

    /// Encodes as lossy WebP; alpha is kept (WebP's alpha plane is lossless). Gray bitmaps are
    /// written as RGB, WebP having no gray mode. `metadata` is written as an `EXIF` chunk.
    public static func webp(
        _ bitmap: Bitmap, options: WebPEncodingOptions = WebPEncodingOptions(), metadata: ImageMetadata = .none
    ) throws(ImageCodecError) -> Data {
        try metadata.validate()
        guard (1...100).contains(options.quality) else {
            throw .invalidArgument("WebP quality must be 1...100, got \(options.quality)")
        }
        guard (0...6).contains(options.method) else {
            throw .invalidArgument("WebP method must be 0...6, got \(options.method)")
        }
        let colour = try bitmap.expandingGray()
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = ShimMessage.buffer()
        let status = colour.pixels.withUnsafeBufferPointer { pixels in
            var parameters = iec_webp_encode_params(
                width: UInt32(colour.width), height: UInt32(colour.height), channels: Int32(colour.format.channels),
                quality: Float(options.quality), method: Int32(options.method), sharp_yuv: options.sharpYUV ? 1 : 0,
                stop: ImageCodecError.stopProbe)
            return iec_webp_encode(&parameters, pixels.baseAddress, colour.bytesPerRow, &output, &length, &message)
        }
        let data = try takeOutput(status: status, output: output, length: length, message: message)
        let profile = options.preservesICCProfile ? bitmap.iccProfile.flatMap { $0.isEmpty ? nil : $0 } : nil
        return WebPContainer.adding(
            iccProfile: profile, exif: metadata.exif, to: data, width: colour.width, height: colour.height, hasAlpha: colour.format.hasAlpha)
    }

    /// Encodes as AVIF (AV1, 4:2:0); alpha is kept as an auxiliary image, gray is written as
    /// RGB. `metadata` is written as an `Exif` item describing the image.
    public static func avif(
        _ bitmap: Bitmap, options: AVIFEncodingOptions = AVIFEncodingOptions(), metadata: ImageMetadata = .none
    ) throws(ImageCodecError) -> Data {
        try metadata.validate()
        guard (1...100).contains(options.quality) else {
            throw .invalidArgument("AVIF quality must be 1...100, got \(options.quality)")
        }
        guard (0...9).contains(options.speed) else {
            throw .invalidArgument("AVIF speed must be 0...9, got \(options.speed)")
        }
        let colour = try bitmap.expandingGray()
        let profile = options.preservesICCProfile ? colour.iccProfile ?? [] : []
        let exif = metadata.exif ?? []
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = ShimMessage.buffer()
        let status = colour.pixels.withUnsafeBufferPointer { pixels in
            profile.withUnsafeBufferPointer { icc in
                exif.withUnsafeBufferPointer { exif in
                    // libaom in constant-quality mode, the quality mapped to its level as libheif
                    // (which wrote the engine's AVIFs before libavif) maps it, tuned for SSIM:
                    // the quality dial means what it meant. No intra block copy: libaom took a
                    // 512 px sky for a screenshot and spent 10× the time and 40 MB on it.
                    var parameters = iec_avif_encode_params(
                        width: UInt32(colour.width), height: UInt32(colour.height), channels: Int32(colour.format.channels),
                        cq_level: Int32(((100 - options.quality) * 63 + 50) / 100), min_quantizer: 1, max_quantizer: 63, tune_ssim: 1,
                        intra_block_copy: 0,
                        speed: Int32(options.speed), icc_profile: icc.baseAddress, icc_length: icc.count, exif: exif.baseAddress,
                        exif_length: exif.count)
                    return iec_avif_encode(&parameters, pixels.baseAddress, colour.bytesPerRow, &output, &length, &message)
                }
            }
        }
        return try takeOutput(status: status, output: output, length: length, message: message)
    }

    /// Encodes as `format`: JPEG with `jpegOptions`, PNG with `pngOptions`, WebP with
    /// `webpOptions` or AVIF with `avifOptions`; the options of the other formats are ignored.
    /// For callers that choose the format at run time. HEIC and GIF are read, not written.
    public static func encode(
        _ bitmap: Bitmap, as format: ImageFormat, jpegOptions: JPEGEncodingOptions = JPEGEncodingOptions(),
        pngOptions: PNGEncodingOptions = PNGEncodingOptions(), webpOptions: WebPEncodingOptions = WebPEncodingOptions(),
        avifOptions: AVIFEncodingOptions = AVIFEncodingOptions(), metadata: ImageMetadata = .none
    ) throws(ImageCodecError) -> Data {
        switch format {
        case .jpeg: try jpeg(bitmap, options: jpegOptions, metadata: metadata)
        case .png: try png(bitmap, options: pngOptions, metadata: metadata)
        case .webp: try webp(bitmap, options: webpOptions, metadata: metadata)
        case .avif: try avif(bitmap, options: avifOptions, metadata: metadata)
        case .heic, .gif:
            throw .invalidArgument("\(format.rawValue.uppercased()) is read, not written: encode as JPEG, PNG, WebP or AVIF")
        }
    }

    /// Moves the shim's malloc'd buffer into `Data` without copying.
    private static func takeOutput(
        status: iec_status, output: UnsafeMutablePointer<UInt8>?, length: Int,
        message: [CChar]
    ) throws(ImageCodecError) -> Data {
        try checkEncoder(status, message: message.shimMessage)
        guard let output else { throw .encodingFailed(message.shimMessage) }
        return try adopt(output, length: length)
    }

    /// The error for an encoder's failed status: running out of memory, or the library's message.
    static func checkEncoder(_ status: iec_status, message: @autoclosure () -> String) throws(ImageCodecError) {
        guard status != IEC_OK else { return }
        if status == IEC_OUT_OF_MEMORY { throw .outOfMemory }
        if status == IEC_CANCELLED { throw .cancelled }
        throw .encodingFailed(message())
    }

    /// `Data` over an encoder's malloc'd output, without copying, charged to the current
    /// ledger for as long as it lives (the encoder's plan counted its growth; the output itself
    /// may outlive the work, in a cache or an answer being written). Freed, and the error
    /// thrown, when the ledger's budget has no room for it.
    static func adopt(_ output: UnsafeMutablePointer<UInt8>, length: Int) throws(ImageCodecError) -> Data {
        // The encoders grow their buffer by doubling, so up to half of it can be slack; a cache
        // holding thousands of thumbnails would keep that slack resident. Shrinking in place is
        // cheap (glibc splits the block) and, should it fail, the larger block is still valid.
        let fitted = realloc(output, max(1, length))?.assumingMemoryBound(to: UInt8.self) ?? output // charged: below, as adopted
        return try Data.charged(adopting: UnsafeMutableRawPointer(fitted), count: length)
    }
}
