/// A decoded, upright 8-bit image held in memory.
///
/// Rows are tightly packed (`bytesPerRow == width * format.channels`), top row first. The value
/// is immutable and `Sendable`, so it can be cached and shared between tasks freely.
public struct Bitmap: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Channels per pixel and their meaning.
    public let format: PixelFormat
    /// `height * bytesPerRow` bytes.
    public let pixels: [UInt8]
    /// The colour space of the values: nil means sRGB (gray: the sRGB curve), which is what
    /// the decoder delivers by default (converted, or untagged and taken as sRGB, as browsers
    /// do); otherwise the source's ICC profile, kept with `ColorManagement.preserveSource`
    /// and carried into encoded outputs so viewers that manage colour show it right.
    public var iccProfile: [UInt8]?

    /// Fails when the buffer size does not match the dimensions.
    public init(width: Int, height: Int, format: PixelFormat, pixels: [UInt8], iccProfile: [UInt8]? = nil) throws(ImageCodecError) {
        guard width > 0, height > 0 else {
            throw .invalidArgument("bitmap dimensions must be positive, got \(width)×\(height)")
        }
        let (rowBytes, rowOverflow) = width.multipliedReportingOverflow(by: format.channels)
        let (total, totalOverflow) = rowBytes.multipliedReportingOverflow(by: height)
        guard !rowOverflow, !totalOverflow, total == pixels.count else {
            throw .invalidArgument("bitmap of \(width)×\(height) \(format) needs a different buffer than \(pixels.count) bytes")
        }
        self.init(unchecked: width, height: height, format: format, pixels: pixels, iccProfile: iccProfile)
    }

    /// For the codec's own results, whose sizes are correct by construction.
    init(unchecked width: Int, height: Int, format: PixelFormat, pixels: [UInt8], iccProfile: [UInt8]? = nil) {
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels
        self.iccProfile = iccProfile
    }

    /// Bytes in one row: `width × format.channels` (rows are tightly packed).
    public var bytesPerRow: Int { width * format.channels }

    /// Memory the pixels occupy: `bytesPerRow × height`. This is the cost a memory cache should
    /// charge for keeping the bitmap.
    public var byteCount: Int { pixels.count }

    /// The channel values of the pixel at (`x`, `y`); (0, 0) is the top-left corner.
    public func pixel(x: Int, y: Int) -> ArraySlice<UInt8> {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)×\(height)")
        let start = y * bytesPerRow + x * format.channels
        return pixels[start..<start + format.channels]
    }
}
