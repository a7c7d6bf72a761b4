extension Bitmap {
    /// Returns the bitmap transformed so that an image stored with `orientation` appears upright.
    public func applying(_ orientation: ExifOrientation) throws(ImageCodecError) -> Bitmap {
        guard orientation != .up else { return self }
        let channels = format.channels
        let outWidth = orientation.swapsDimensions ? height : width
        let outHeight = orientation.swapsDimensions ? width : height
        let (w, h) = (width, height)
        // For each output pixel, which stored pixel lands there.
        let source: (Int, Int) -> (Int, Int) =
            switch orientation {
            case .up: { x, y in (x, y) }
            case .upMirrored: { x, y in (w - 1 - x, y) }
            case .down: { x, y in (w - 1 - x, h - 1 - y) }
            case .downMirrored: { x, y in (x, h - 1 - y) }
            case .leftMirrored: { x, y in (y, x) }
            case .right: { x, y in (y, h - 1 - x) }
            case .rightMirrored: { x, y in (w - 1 - y, h - 1 - x) }
            case .left: { x, y in (w - 1 - y, x) }
            }
        return try Bitmap.make(width: outWidth, height: outHeight, format: format, iccProfile: iccProfile) { (out) throws(ImageCodecError) in
            try pixels.withUnsafeBufferPointer { (input) throws(ImageCodecError) in
                var target = 0
                var checkpoint = CancellationCheckpoint()
                for y in 0..<outHeight {
                    try checkpoint.advance(by: outWidth)
                    for x in 0..<outWidth {
                        let (sx, sy) = source(x, y)
                        let from = (sy * w + sx) * channels
                        for c in 0..<channels { out[target + c] = input[from + c] }
                        target += channels
                    }
                }
            }
        }
    }
}
