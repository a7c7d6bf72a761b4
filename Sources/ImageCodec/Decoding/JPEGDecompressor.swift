import CImageCodecShim

/// One libjpeg decompressor, alive from a header read to the end of one decode.
///
/// Every libjpeg call goes through the C shim, which catches libjpeg's longjmp-based errors and
/// returns a status; `check` turns that status into an `ImageCodecError`. The shim counts what
/// libjpeg allocates (`memory`) and keeps only the markers the engine uses: the first EXIF
/// APP1, and APP2 ICC chunks up to `DecodingLimits.maxICCProfileBytes`.
final class JPEGDecompressor {
    private let handle: OpaquePointer
    let limits: DecodingLimits

    /// Reads from `bytes`, which must stay valid until the next call or be handed again with
    /// `rebase(_:)` (the caller's buffer may move between calls). `maxMemory` is libjpeg's own
    /// ceiling for its whole-image buffers (by default the limits').
    init(bytes: UnsafeRawBufferPointer, strict: Bool, limits: DecodingLimits, maxMemory: Int? = nil) throws(ImageCodecError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .truncatedData }
        guard
            let handle = iec_jpeg_decoder_create(
                base, bytes.count, strict ? 1 : 0, maxMemory ?? limits.jpegMemoryLimit,
                Int32(clamping: limits.maxProgressiveScans), limits.maxICCProfileBytes, ImageCodecError.stopProbe)
        else {
            throw .outOfMemory
        }
        self.handle = handle
        self.limits = limits
        try check(iec_jpeg_decoder_status(handle))
    }

    deinit { iec_jpeg_decoder_destroy(handle) }

    /// The same bytes at the address they have now.
    func rebase(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        iec_jpeg_decoder_rebase(handle, base, bytes.count)
    }

    /// Whether damage warnings fail the calls from now on.
    func setStrict(_ strict: Bool) { iec_jpeg_decoder_set_strict(handle, strict ? 1 : 0) }

    /// Leaves Huffman-coded scans to libjpeg's own entropy decoders (before decompression starts).
    func useLibraryEntropyDecoders() { iec_jpeg_decoder_use_library_entropy(handle) }

    /// Whether the engine's entropy decoders read this decode's scans.
    var decodedWithEngineEntropy: Bool { iec_jpeg_decoder_decodes_entropy(handle) != 0 }

    /// What libjpeg holds now and at most so far, and its ceiling (0: none).
    var memory: LibraryMemory { LibraryMemory(iec_jpeg_decoder_memory(handle)) }

    /// Caps what libjpeg may hold from now on; an allocation past it fails the call with
    /// `limitExceeded`.
    func limitMemory(to bytes: Int) { iec_jpeg_decoder_set_memory_limit(handle, bytes) }

    /// True when the file's ICC chunks passed `maxICCProfileBytes` and were dropped whole.
    var iccProfileDropped: Bool { iec_jpeg_decoder_icc_dropped(handle) != 0 }

    /// Bytes of ICC chunks held, dropped ones included: about the size of the profile they make.
    var iccProfileBytes: Int { Int(clamping: iec_jpeg_decoder_icc_bytes(handle)) }

    var info: UnsafeMutablePointer<jpeg_decompress_struct> { iec_jpeg_decoder_info(handle) }

    var sawTruncation: Bool { iec_jpeg_decoder_saw_truncation(handle) != 0 }

    /// The warnings tolerated so far (the first few; libjpeg's code and message each).
    var warnings: [DecodingWarning] {
        (0..<iec_jpeg_decoder_recorded_warnings(handle)).map { index in
            DecodingWarning(
                code: Int(iec_jpeg_decoder_warning_code(handle, index)),
                message: String(cString: iec_jpeg_decoder_warning_message(handle, index)))
        }
    }

    func readHeader() throws(ImageCodecError) { try check(iec_jpeg_read_header(handle)) }

    func calculateOutputDimensions() throws(ImageCodecError) { try check(iec_jpeg_calc_output_dimensions(handle)) }

    func startDecompress() throws(ImageCodecError) { try check(iec_jpeg_start_decompress(handle)) }

    func finishDecompress() throws(ImageCodecError) { try check(iec_jpeg_finish_decompress(handle)) }

    /// Delivers only the columns `columns` (scaled pixels) from here on, widened by libjpeg to
    /// whole iMCUs; returns the span actually delivered.
    func cropScanlines(to columns: Range<Int>) throws(ImageCodecError) -> Range<Int> {
        var (offset, width) = (UInt32(columns.lowerBound), UInt32(columns.count))
        try check(iec_jpeg_crop_scanline(handle, &offset, &width))
        return Int(offset)..<Int(offset + width)
    }

    /// Skips `count` rows (their entropy data is still read, so damage there is still seen).
    func skipScanlines(_ count: Int) throws(ImageCodecError) {
        guard count > 0 else { return }
        var skipped: UInt32 = 0
        try check(iec_jpeg_skip_scanlines(handle, UInt32(count), &skipped))
        guard skipped == count else { throw .corruptData("libjpeg skipped \(skipped) of \(count) rows") }
    }

    /// Makes `method` the inverse DCT of component `index` for the rest of the decode (after
    /// `startDecompress`); false when libjpeg keeps its own.
    func replaceIDCT(component index: Int, with method: iec_jpeg_idct_method) -> Bool {
        iec_jpeg_replace_idct(handle, Int32(index), method) != 0
    }

    /// Reads up to `count` rows into the given row pointers; returns how many were read.
    func readScanlines(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws(ImageCodecError) -> Int {
        var read: UInt32 = 0
        try check(iec_jpeg_read_scanlines(handle, rows, UInt32(count), &read))
        return Int(read)
    }

    /// The ICC profile reassembled from APP2 markers, if any.
    func iccProfile() throws(ImageCodecError) -> [UInt8]? {
        var profile: UnsafeMutablePointer<UInt8>?
        var length: UInt32 = 0
        try check(iec_jpeg_read_icc_profile(handle, &profile, &length))
        guard let profile else { return nil }
        defer { iec_free(profile) }
        return Array(UnsafeBufferPointer(start: profile, count: Int(length)))
    }

    /// The orientation in the first APP1 EXIF marker, if any.
    func exifOrientation() -> ExifOrientation? {
        var marker = info.pointee.marker_list
        while let current = marker {
            if Int32(current.pointee.marker) == JPEG_APP0 + 1, let data = current.pointee.data {
                let segment = UnsafeBufferPointer(start: data, count: Int(current.pointee.data_length))
                if let orientation = ExifReader.orientation(app1: segment) { return orientation }
            }
            marker = current.pointee.next
        }
        return nil
    }

    private func check(_ status: iec_status) throws(ImageCodecError) {
        switch status {
        case IEC_OK:
            return
        case IEC_TRUNCATED:
            throw .truncatedData
        case IEC_CANCELLED:
            throw .cancelled
        case IEC_OUT_OF_MEMORY:
            throw .tooLarge(
                width: Int(info.pointee.image_width), height: Int(info.pointee.image_height),
                limit: limits.maxPixelCount)
        case IEC_LIMIT_EXCEEDED:
            throw .limitExceeded("libjpeg needed more memory than the decode plan allows (\(memory.limit) bytes)")
        default:
            let message = String(cString: iec_jpeg_decoder_message(handle))
            let code = iec_jpeg_decoder_message_code(handle)
            if Self.unsupportedCodes.contains(code) { throw .unsupportedFormat(.jpegVariant(message)) }
            throw .corruptData(message)
        }
    }

    /// libjpeg errors that mean "valid JPEG, but a kind this build cannot decode".
    private static let unsupportedCodes: Set<Int32> = [
        Int32(JERR_BAD_PRECISION.rawValue), Int32(JERR_SOF_UNSUPPORTED.rawValue),
        Int32(JERR_NOT_COMPILED.rawValue), Int32(JERR_ARITH_NOTIMPL.rawValue)
    ]
}
