extension Bitmap {
    /// The bitmap resampled to exactly `width × height` with Lanczos-3 (premultiplied alpha).
    /// Decoders already resample while decoding; this is for bitmaps that are in memory anyway.
    public func resampled(width targetWidth: Int, height targetHeight: Int) throws(ImageCodecError) -> Bitmap {
        try resampled(width: targetWidth, height: targetHeight, boxPreReduction: true)
    }

    /// `resampled(width:height:)`, optionally with Lanczos alone over the whole reduction
    /// (no block averaging first): the reference the thumbnail-stages benchmark measures against.
    @_spi(Tuning) public func resampled(width targetWidth: Int, height targetHeight: Int, boxPreReduction: Bool) throws(ImageCodecError) -> Bitmap {
        guard targetWidth > 0, targetHeight > 0 else {
            throw .invalidArgument("target size must be positive, got \(targetWidth)×\(targetHeight)")
        }
        let sink = try RowSinks.make(
            source: (width, height), target: (targetWidth, targetHeight), format: format,
            boxPreReduction: boxPreReduction)
        try pixels.withUnsafeBufferPointer { (buffer) throws(ImageCodecError) in
            var checkpoint = CancellationCheckpoint()
            for y in 0..<height {
                try checkpoint.advance(by: width)
                sink.consume(buffer.baseAddress! + y * bytesPerRow)
            }
        }
        return Bitmap(
            unchecked: targetWidth, height: targetHeight, format: format, pixels: try sink.finish(),
            iccProfile: iccProfile)
    }

    /// The bitmap scaled so its longest side is at most `maxPixelSize` (never enlarged).
    public func downsampled(maxPixelSize: Int) throws(ImageCodecError) -> Bitmap {
        guard maxPixelSize > 0 else { throw .invalidArgument("maxPixelSize must be positive, got \(maxPixelSize)") }
        let plan = ResizePlan(.maxPixelSize(maxPixelSize), sourceWidth: width, sourceHeight: height)
        return (plan.width, plan.height) == (width, height) ? self : try resampled(width: plan.width, height: plan.height)
    }
}
