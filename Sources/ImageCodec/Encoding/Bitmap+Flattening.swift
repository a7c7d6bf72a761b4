extension Bitmap {
    /// The bitmap without its alpha channel, composited over `background`. Gray stays gray
    /// (the background's luma is used); bitmaps without alpha are returned unchanged.
    public func flattened(over background: RGBColor = .white) throws(ImageCodecError) -> Bitmap {
        guard format.hasAlpha else { return self }
        let inChannels = format.channels
        let outChannels = format.withoutAlpha.channels
        let backdrop: [UInt32] =
            format.isGray
            ? [(UInt32(background.red) * 299 + UInt32(background.green) * 587 + UInt32(background.blue) * 114 + 500) / 1000]
            : [UInt32(background.red), UInt32(background.green), UInt32(background.blue)]
        return try Bitmap.make(width: width, height: height, format: format.withoutAlpha, iccProfile: iccProfile) {
            (out) throws(ImageCodecError) in
            try pixels.withUnsafeBufferPointer { (input) throws(ImageCodecError) in
                var checkpoint = CancellationCheckpoint()
                for row in 0..<height {
                    try checkpoint.advance(by: width)
                    for pixel in row * width..<(row + 1) * width {
                        let alpha = UInt32(input[pixel * inChannels + inChannels - 1])
                        for channel in 0..<outChannels {
                            let value = UInt32(input[pixel * inChannels + channel])
                            out[pixel * outChannels + channel] = UInt8((value * alpha + backdrop[channel] * (255 - alpha) + 127) / 255)
                        }
                    }
                }
            }
        }
    }
}
