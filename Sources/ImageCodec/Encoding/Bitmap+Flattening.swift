extension Bitmap {
    /// The bitmap without its alpha channel, composited over `background`. Gray stays gray
    /// (the background's luma is used); bitmaps without alpha are returned unchanged.
    public func flattened(over background: RGBColor = .white) -> Bitmap {
        guard format.hasAlpha else { return self }
        let inChannels = format.channels
        let outChannels = format.withoutAlpha.channels
        let backdrop: [UInt32] =
            format.isGray
            ? [(UInt32(background.red) * 299 + UInt32(background.green) * 587 + UInt32(background.blue) * 114 + 500) / 1000]
            : [UInt32(background.red), UInt32(background.green), UInt32(background.blue)]
        let count = width * height
        var output = [UInt8](repeating: 0, count: count * outChannels)
        pixels.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                for pixel in 0..<count {
                    let alpha = UInt32(input[pixel * inChannels + inChannels - 1])
                    for channel in 0..<outChannels {
                        let value = UInt32(input[pixel * inChannels + channel])
                        out[pixel * outChannels + channel] = UInt8((value * alpha + backdrop[channel] * (255 - alpha) + 127) / 255)
                    }
                }
            }
        }
        return Bitmap(unchecked: width, height: height, format: format.withoutAlpha, pixels: output, iccProfile: iccProfile)
    }
}
