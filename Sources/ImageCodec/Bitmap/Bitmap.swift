/// A decoded, upright 8-bit image held in memory.
///
/// Rows are tightly packed (`bytesPerRow == width * format.channels`), top row first. The value
/// is immutable and `Sendable`, so it can be cached and shared between tasks freely.
///
/// A bitmap the codec makes under a ``MemoryLedger`` keeps its pixels' charge there for as long
/// as any copy of it lives.
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
    /// What holds the pixels' bytes in the ledger they were made under; nil for pixels the
    /// caller made, or made outside a ledger.
    let charge: MemoryCharge?

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
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels
        self.iccProfile = iccProfile
        charge = nil
    }

    /// For the codec's own results, whose sizes are correct by construction and whose pixels
    /// were charged as they were allocated.
    init(unchecked width: Int, height: Int, format: PixelFormat, pixels: ChargedArray<UInt8>, iccProfile: [UInt8]? = nil) {
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels.elements
        self.iccProfile = iccProfile
        charge = pixels.charge
    }

    /// `width × height` pixels in `format` that `body` writes, every byte, row after row: the
    /// pixels are charged to the current ledger before they are allocated.
    static func make(
        width: Int, height: Int, format: PixelFormat, iccProfile: [UInt8]? = nil,
        writing body: (UnsafeMutableBufferPointer<UInt8>) throws(ImageCodecError) -> Void
    ) throws(ImageCodecError) -> Bitmap {
        let pixels = try ChargedArray<UInt8>(uninitializedCount: width * height * format.channels, initializingWith: body)
        return Bitmap(unchecked: width, height: height, format: format, pixels: pixels, iccProfile: iccProfile)
    }

    /// Equal when they have the same size, format, pixels and profile (where their bytes are
    /// charged does not matter).
    public static func == (lhs: Bitmap, rhs: Bitmap) -> Bool {
        lhs.width == rhs.width && lhs.height == rhs.height && lhs.format == rhs.format && lhs.iccProfile == rhs.iccProfile
            && lhs.pixels == rhs.pixels
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
