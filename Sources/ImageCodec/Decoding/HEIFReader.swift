import CImageCodecShim

/// One libheif context and its primary HEIC image, alive from a header read to the end of one
/// decode. All libheif calls go through the C shim, which turns its errors into a status and a
/// message; `check` turns those into an `ImageCodecError`.
final class HEIFReader {
    private let handle: OpaquePointer
    /// What the primary image's handle says, libheif's transformations applied.
    let info: iec_heif_info
    /// The bytes libheif reads in place: a decode may use this reader only while they are
    /// at hand at this same address (``reads(_:)``).
    private let bytes: UnsafeRawBufferPointer

    /// Reads the boxes of `bytes` and opens the primary image. libheif keeps no copy: it reads
    /// them again in each decode, which must be handed the same bytes.
    init(bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else { throw .truncatedData }
        self.bytes = bytes
        var status = IEC_OK
        var message = ShimMessage.buffer()
        // libheif's own ceiling, a side: ours are checked on the handle's size right after.
        let side = Int32(clamping: min(limits.maxDimension, 1 << 16))
        guard let handle = iec_heif_reader_create(base, bytes.count, side, &status, &message) else {
            throw Self.error(status, message.shimMessage)
        }
        self.handle = handle
        var info = iec_heif_info()
        iec_heif_reader_info(handle, &info)
        self.info = info
    }

    deinit { iec_heif_reader_destroy(handle) }

    /// Whether `current` are the bytes this reader was opened on, at the same address: only
    /// then may it decode while they are at hand (a `Data` could hand another copy).
    func reads(_ current: UnsafeRawBufferPointer) -> Bool {
        current.baseAddress == bytes.baseAddress && current.count == bytes.count
    }

    /// Decodes the primary image as interleaved 8-bit RGB or RGBA and hands `body` its rows
    /// (valid only during the call), with what libheif papered over (its first warning), if
    /// anything. No canvas libheif makes on the way (a grid's, an overlay's) may be longer on a
    /// side than `maxSide`.
    func decode<Result>(
        channels: Int, maxSide: Int,
        _ body: (_ pixels: UnsafePointer<UInt8>, _ stride: Int, _ width: Int, _ height: Int, _ warning: String?) throws(ImageCodecError) ->
            Result
    ) throws(ImageCodecError) -> Result {
        var pixels: UnsafePointer<UInt8>?
        var stride = 0
        var (width, height): (Int32, Int32) = (0, 0)
        var message = ShimMessage.buffer()
        var warnings: Int32 = 0
        let status = iec_heif_reader_decode(
            handle, Int32(channels), Int32(clamping: maxSide), &pixels, &stride, &width, &height, &warnings, &message)
        guard status == IEC_OK, let pixels else { throw Self.error(status, message.shimMessage) }
        return try body(pixels, stride, Int(width), Int(height), warnings > 0 ? message.shimMessage : nil)
    }

    /// Decodes the primary image as 8-bit YCbCr planes in the stream's own chroma layout
    /// (`chroma`: 1 4:2:0, 3 4:4:4), so libheif converts nothing, and hands `body` the planes
    /// (valid only during the call) and the first warning, as ``decode(channels:maxSide:_:)``.
    func decodePlanes<Result>(
        chroma: Int, maxSide: Int, _ body: (_ planes: YCbCrPlanes, _ warning: String?) throws(ImageCodecError) -> Result
    ) throws(ImageCodecError) -> Result {
        var planes = iec_heif_planes()
        var message = ShimMessage.buffer()
        var warnings: Int32 = 0
        let status = iec_heif_reader_decode_planes(handle, Int32(chroma), Int32(clamping: maxSide), &planes, &warnings, &message)
        guard status == IEC_OK, let luma = planes.y, let cb = planes.cb, let cr = planes.cr else {
            throw Self.error(status == IEC_OK ? IEC_ERROR : status, message.shimMessage)
        }
        let result = YCbCrPlanes(
            luma: luma, cb: cb, cr: cr, lumaStride: Int(planes.y_stride), cbStride: Int(planes.cb_stride), crStride: Int(planes.cr_stride),
            width: Int(planes.width), height: Int(planes.height), chromaWidth: Int(planes.chroma_width),
            chromaHeight: Int(planes.chroma_height))
        return try body(result, warnings > 0 ? message.shimMessage : nil)
    }

    private static func error(_ status: iec_status, _ message: String) -> ImageCodecError {
        ImageCodecError(shimStatus: status, message: message, variant: ImageCodecError.UnsupportedFormat.heifVariant)
    }
}
