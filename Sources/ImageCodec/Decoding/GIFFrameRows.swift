import CImageCodecShim

/// One GIF frame's pixels a stored row at a time: its LZW data decoded by giflib into palette
/// indices, with the row each goes to in the frame (interlaced frames arrive by pass) and the
/// frame's palette as RGBA. Both the still decode, which streams, and the animation canvas read
/// frames through here.
final class GIFFrameRows {
    /// The frame's colour table (local, else global), 256 entries, opaque; 1 KiB.
    let palette: [SIMD4<UInt8>]
    /// The last row ``next()`` decoded: `frame.width` indices.
    private(set) var indices: ChargedArray<UInt8>
    private let decoder: OpaquePointer
    private var order: InterlacedRows
    private var message = ShimMessage.buffer()

    /// Opens `frame`'s data in `bytes` (the whole file); the frame must have pixels.
    init(_ frame: GIFFrame, of container: GIFContainer, _ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        guard let table = frame.palette ?? container.globalPalette else {
            throw .corruptData("a frame with neither a local nor a global colour table")
        }
        var palette = [SIMD4<UInt8>](repeating: SIMD4(0, 0, 0, 255), count: 256) // small: 1 KiB
        for entry in 0..<(table.count / 3) {
            let at = table.lowerBound + 3 * entry
            palette[entry] = SIMD4(bytes[at], bytes[at + 1], bytes[at + 2], 255)
        }
        self.palette = palette
        indices = try ChargedArray<UInt8>(repeating: 0, count: frame.width)
        order = InterlacedRows(height: frame.height, interlaced: frame.interlaced)
        let data = UnsafeRawBufferPointer(rebasing: bytes[frame.data])
        guard
            let decoder = iec_gif_frame_open(
                data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, Int32(frame.width), Int32(frame.height), 1,
                &message)
        else { throw .corruptData(message.shimMessage) }
        self.decoder = decoder
    }

    deinit { iec_gif_frame_close(decoder) }

    /// Decodes the next stored row into ``indices`` and returns its row in the frame.
    func next() throws(ImageCodecError) -> Int {
        let status = indices.elements.withUnsafeMutableBufferPointer { iec_gif_frame_row(decoder, $0.baseAddress, &message) }
        guard status == IEC_OK else { throw ImageCodecError(shimStatus: status, message: message.shimMessage) }
        return order.next()
    }

    /// After the last row: the data must end with the frame (LZW data past it is refused).
    func finish() throws(ImageCodecError) {
        let status = iec_gif_frame_finish(decoder, &message)
        guard status == IEC_OK else { throw .limitExceeded(message.shimMessage) }
    }
}
