import CImageCodecShim

/// One libavif decoder (AV1 through dav1d) over an AVIF's bytes, alive within one call that
/// holds them: libavif reads the bytes in place, so a reader is never kept between a header
/// read and a decode (as for WebP, the decode parses again, which costs no AV1 decoding). All
/// libavif calls go through the C shim, which turns its errors into a status and a message.
final class AVIFReader {
    private let handle: OpaquePointer
    /// What the parsed primary image says, as coded: no transformation applied.
    let info: iec_avif_info

    /// Parses the boxes of `bytes`, which must outlive the reader, under libavif's own limits
    /// (ours, checked on the header right after, are the same or tighter).
    init(bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else { throw .truncatedData }
        var status = IEC_OK
        var message = ShimMessage.buffer()
        let pixels = UInt32(clamping: limits.maxPixelCount)
        let side = UInt32(clamping: min(limits.maxDimension, 1 << 16))
        guard let handle = iec_avif_reader_create(base, bytes.count, pixels, side, &status, &message) else {
            throw Self.error(status, message.shimMessage)
        }
        self.handle = handle
        var info = iec_avif_info()
        iec_avif_reader_info(handle, &info)
        self.info = info
    }

    deinit { iec_avif_reader_destroy(handle) }

    /// Decodes the primary image as interleaved 8-bit RGB or straight RGBA, as coded, and hands
    /// `body` its rows (valid only during the call).
    func decode<Result>(
        channels: Int,
        _ body: (_ pixels: UnsafePointer<UInt8>, _ stride: Int) throws(ImageCodecError) -> Result
    ) throws(ImageCodecError) -> Result {
        var pixels: UnsafePointer<UInt8>?
        var stride = 0
        var message = ShimMessage.buffer()
        let status = iec_avif_reader_decode(handle, Int32(channels), &pixels, &stride, &message)
        guard status == IEC_OK, let pixels, stride >= Int(info.width) * channels else {
            throw Self.error(status == IEC_OK ? IEC_ERROR : status, status == IEC_OK ? "libavif: no pixels" : message.shimMessage)
        }
        return try body(pixels, stride)
    }

    private static func error(_ status: iec_status, _ message: String) -> ImageCodecError {
        ImageCodecError(shimStatus: status, message: message, variant: ImageCodecError.UnsupportedFormat.heifVariant)
    }
}
