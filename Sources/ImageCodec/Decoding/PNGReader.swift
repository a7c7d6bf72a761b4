import CImageCodecShim

/// One libpng reader, alive from a header read to the end of one decode. All libpng calls go
/// through the C shim (libpng reports errors by longjmp); `check` turns its status into an
/// `ImageCodecError`. The shim counts what libpng and zlib allocate (`memory`) and has libpng
/// skip every ancillary chunk but iCCP and tRNS unread.
final class PNGReader {
    private let handle: OpaquePointer

    /// Reads from `bytes`, which must stay valid until the next call or be handed again with
    /// `rebase(_:)`.
    init(bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .truncatedData }
        guard let handle = iec_png_decoder_create(base, bytes.count, limits.maxICCProfileBytes) else {
            throw .outOfMemory
        }
        self.handle = handle
        try check(iec_png_decoder_status(handle))
    }

    deinit { iec_png_decoder_destroy(handle) }

    /// The same bytes at the address they have now.
    func rebase(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        iec_png_decoder_rebase(handle, base, bytes.count)
    }

    /// What libpng holds now and at most so far, and its ceiling (0: none).
    var memory: LibraryMemory { LibraryMemory(iec_png_decoder_memory(handle)) }

    /// Caps what libpng may hold from now on; an allocation past it fails the call with
    /// `limitExceeded`.
    func limitMemory(to bytes: Int) { iec_png_decoder_set_memory_limit(handle, bytes) }

    /// The warnings libpng gave so far (the first few), its message each.
    var warnings: [String] {
        (0..<iec_png_decoder_recorded_warnings(handle)).map { String(cString: iec_png_decoder_warning_message(handle, $0)) }
    }

    /// What the header read found; nil before it.
    private(set) var header: iec_png_header?

    func readHeader() throws(ImageCodecError) -> iec_png_header {
        var header = iec_png_header()
        try check(iec_png_read_header(handle, &header))
        self.header = header
        return header
    }

    /// A copy of the iCCP profile the header read kept (libpng's copy lives as long as the reader).
    var iccProfile: [UInt8]? {
        guard let header, let profile = header.icc_profile else { return nil }
        return Array(UnsafeBufferPointer(start: profile, count: Int(header.icc_length)))
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
        case IEC_LIMIT_EXCEEDED: throw .limitExceeded("libpng needed more memory than the decode plan allows (\(memory.limit) bytes)")
        default: throw .corruptData(String(cString: iec_png_decoder_message(handle)))
        }
    }
}
