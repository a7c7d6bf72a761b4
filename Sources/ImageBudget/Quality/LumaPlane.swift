import ImageCodec

/// Luma (Y = 0.299 R + 0.587 G + 0.114 B) of a bitmap as floats, the channel SSIM is
/// computed on. Alpha is composited over white first, as uploads are.
public struct LumaPlane: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Row-major luma, 0...255, `width × height` values.
    public let values: [Float]

    /// The luma of `bitmap` (gray bitmaps as they are, alpha composited over white).
    public init(_ bitmap: Bitmap) throws(ImageCodecError) {
        let opaque = try bitmap.flattened(over: .white)
        width = opaque.width
        height = opaque.height
        let count = opaque.width * opaque.height
        var values = [Float](repeating: 0, count: count)
        opaque.pixels.withUnsafeBufferPointer { pixels in
            values.withUnsafeMutableBufferPointer { luma in
                if opaque.format == .gray {
                    for index in 0..<count { luma[index] = Float(pixels[index]) }
                } else {
                    for index in 0..<count {
                        let base = index * 3
                        luma[index] = 0.299 * Float(pixels[base]) + 0.587 * Float(pixels[base + 1]) + 0.114 * Float(pixels[base + 2])
                    }
                }
            }
        }
        self.values = values
    }
}
