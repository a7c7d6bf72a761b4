/// Keeps rows unchanged, for when the decoder already produced the target size.
final class RowCollector: RowSink {
    private let rowLength: Int
    private let height: Int
    private var pixels: ChargedArray<UInt8>?
    private var rows = 0

    init(width: Int, height: Int, format: PixelFormat) throws(ImageCodecError) {
        rowLength = width * format.channels
        self.height = height
        pixels = try ChargedArray(repeating: 0, count: rowLength * height)
    }

    func consume(_ row: UnsafePointer<UInt8>) {
        guard rows < height else { return }
        pixels?.elements.withUnsafeMutableBufferPointer { buffer in
            (buffer.baseAddress! + rows * rowLength).update(from: row, count: rowLength)
        }
        rows += 1
    }

    func finish() throws(ImageCodecError) -> ChargedArray<UInt8> {
        guard rows == height, let finished = pixels else {
            throw .corruptData("decoder delivered \(rows) of \(height) rows")
        }
        // Handed over, so that a caller converting them in place does not copy them first.
        pixels = nil
        return finished
    }
}
