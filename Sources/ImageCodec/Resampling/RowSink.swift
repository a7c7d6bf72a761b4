/// Receives decoded rows top to bottom and turns them into the final pixel buffer.
///
/// Decoders stream into a sink instead of building a full-size image, so whether the rows are
/// kept as they are or resampled on the fly is decided in one place (`make`).
protocol RowSink: AnyObject {
    /// `row` holds `sourceWidth × channels` bytes; it is only valid during the call.
    func consume(_ row: UnsafePointer<UInt8>)
    /// The finished pixels; throws when fewer rows arrived than the image has.
    func finish() throws(ImageCodecError) -> [UInt8]
}

enum RowSinks {
    /// A sink producing `target` pixels from rows of `source` size in `format`.
    static func make(source: (width: Int, height: Int), target: (width: Int, height: Int),
                     format: PixelFormat, boxPreReduction: Bool = true) -> any RowSink {
        if source == target {
            return RowCollector(width: source.width, height: source.height, format: format)
        }
        if format == .gray { return GrayResamplingSink(source: source, target: target, boxPreReduction: boxPreReduction) }
        return ColorResamplingSink(source: source, target: target, format: format, boxPreReduction: boxPreReduction)
    }
}

/// Keeps rows unchanged, for when the decoder already produced the target size.
final class RowCollector: RowSink {
    private let rowLength: Int
    private let height: Int
    private var pixels: [UInt8]
    private var rows = 0

    init(width: Int, height: Int, format: PixelFormat) {
        rowLength = width * format.channels
        self.height = height
        pixels = [UInt8](repeating: 0, count: rowLength * height)
    }

    func consume(_ row: UnsafePointer<UInt8>) {
        guard rows < height else { return }
        pixels.withUnsafeMutableBufferPointer { buffer in
            (buffer.baseAddress! + rows * rowLength).update(from: row, count: rowLength)
        }
        rows += 1
    }

    func finish() throws(ImageCodecError) -> [UInt8] {
        guard rows == height else {
            throw .corruptData("decoder delivered \(rows) of \(height) rows")
        }
        return pixels
    }
}
