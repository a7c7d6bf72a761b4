import CImageCodecShim

/// One libpng reader, alive for one header read or decode. All libpng calls go through the C
/// shim (libpng reports errors by longjmp); `check` turns its status into an `ImageCodecError`.
final class PNGReader {
    private let handle: OpaquePointer

    /// `bytes` must stay valid for the lifetime of the reader.
    init(bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .truncatedData }
        guard let handle = iec_png_decoder_create(base, bytes.count) else {
            throw .outOfMemory
        }
        self.handle = handle
        try check(iec_png_decoder_status(handle))
    }

    deinit { iec_png_decoder_destroy(handle) }

    func readHeader() throws(ImageCodecError) -> iec_png_header {
        var header = iec_png_header()
        try check(iec_png_read_header(handle, &header))
        return header
    }

    /// Sets up expansion to 8-bit gray, gray+alpha, RGB or RGBA and returns the row layout.
    func configureEightBitOutput() throws(ImageCodecError) -> iec_png_output {
        var output = iec_png_output()
        try check(iec_png_configure_8bit(handle, &output))
        return output
    }

    func readRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) throws(ImageCodecError) {
        try check(iec_png_read_rows(handle, rows, UInt32(count)))
    }

    func readEnd() throws(ImageCodecError) { try check(iec_png_read_end(handle)) }

    private func check(_ status: iec_status) throws(ImageCodecError) {
        switch status {
        case IEC_OK: return
        case IEC_TRUNCATED: throw .truncatedData
        case IEC_OUT_OF_MEMORY: throw .outOfMemory
        default: throw .corruptData(String(cString: iec_png_decoder_message(handle)))
        }
    }
}
