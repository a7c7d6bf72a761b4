extension Bitmap {
    /// Luma (Y = 0.299 R + 0.587 G + 0.114 B, the JPEG/Rec. 601 weights) with alpha kept;
    /// gray pixels are returned unchanged. An ICC profile other than a gray one is dropped: it
    /// describes three or four channels, not one.
    public func grayscaled() throws(ImageCodecError) -> Bitmap {
        let profile = ICCProfileHeader(iccProfile)?.colorSpace == .gray ? iccProfile : nil
        guard !format.isGray else {
            var gray = self
            gray.iccProfile = profile
            return gray
        }
        let inChannels = format.channels
        let outFormat: PixelFormat = format.hasAlpha ? .grayAlpha : .gray
        // A gray JPEG or PNG carrying an RGB or CMYK profile is invalid (and misread by some viewers).
        return try Bitmap.make(width: width, height: height, format: outFormat, iccProfile: profile) { (out) throws(ImageCodecError) in
            try pixels.withUnsafeBufferPointer { (input) throws(ImageCodecError) in
                var checkpoint = CancellationCheckpoint()
                for row in 0..<height {
                    try checkpoint.advance(by: width)
                    for pixel in row * width..<(row + 1) * width {
                        let base = pixel * inChannels
                        // Fixed point, 16 fractional bits, rounded.
                        let luma = (19595 * UInt32(input[base]) + 38470 * UInt32(input[base + 1]) + 7471 * UInt32(input[base + 2]) + 32768) >> 16
                        out[pixel * outFormat.channels] = UInt8(luma)
                        if format.hasAlpha { out[pixel * 2 + 1] = input[base + 3] }
                    }
                }
            }
        }
    }
}

extension Bitmap {
    /// Gray as RGB (each value three times) with alpha kept, for encoders without a gray mode;
    /// colour bitmaps are returned unchanged. A gray ICC profile is dropped: it cannot describe
    /// three channels.
    func expandingGray() throws(ImageCodecError) -> Bitmap {
        guard format.isGray else { return self }
        let outFormat: PixelFormat = format.hasAlpha ? .rgba : .rgb
        return try Bitmap.make(width: width, height: height, format: outFormat) { (out) throws(ImageCodecError) in
            try pixels.withUnsafeBufferPointer { (input) throws(ImageCodecError) in
                var checkpoint = CancellationCheckpoint()
                for row in 0..<height {
                    try checkpoint.advance(by: width)
                    for pixel in row * width..<(row + 1) * width {
                        let value = input[pixel * format.channels]
                        let base = pixel * outFormat.channels
                        (out[base], out[base + 1], out[base + 2]) = (value, value, value)
                        if format.hasAlpha { out[base + 3] = input[pixel * 2 + 1] }
                    }
                }
            }
        }
    }
}

extension Bitmap {
    /// The bitmap with an alpha channel, opaque where it had none (gray becomes gray + alpha,
    /// RGB becomes RGBA); a bitmap with alpha is returned unchanged.
    func withAlphaChannel() throws(ImageCodecError) -> Bitmap {
        guard !format.hasAlpha else { return self }
        let channels = format.channels
        let output: PixelFormat = format.isGray ? .grayAlpha : .rgba
        return try Bitmap.make(width: width, height: height, format: output, iccProfile: iccProfile) { (pixels) throws(ImageCodecError) in
            var checkpoint = CancellationCheckpoint()
            for row in 0..<height {
                try checkpoint.advance(by: width)
                for pixel in row * width..<(row + 1) * width {
                    for channel in 0..<channels { pixels[pixel * output.channels + channel] = self.pixels[pixel * channels + channel] }
                    pixels[pixel * output.channels + channels] = 255
                }
            }
        }
    }
}
