/// Converts the finished, resampled bitmap to sRGB in place: used when the conversion keeps the
/// pixel layout and a smaller image was asked for, so the transform runs on the thumbnail's
/// pixels instead of the DCT-scaled image's (see the README's colour section for the cost).
final class ColorConvertingOutputSink: RowSink {
    private let next: any RowSink
    private let transform: ColorTransform
    private let channels: Int

    init(transform: ColorTransform, channels: Int, next: any RowSink) {
        precondition(transform.layout.output == transform.layout, "in place only when the layout is kept")
        self.transform = transform
        self.channels = channels
        self.next = next
    }

    func consume(_ row: UnsafePointer<UInt8>) { next.consume(row) }

    func finish() throws(ImageCodecError) -> ChargedArray<UInt8> {
        var pixels = try next.finish()
        let (transform, channels, count) = (transform, channels, pixels.count / channels)
        try pixels.elements.withUnsafeMutableBufferPointer { (buffer) throws(ImageCodecError) in
            guard let base = buffer.baseAddress else { return }
            // In slices, each a checkpoint's worth: one call over a whole bitmap could not stop.
            var done = 0
            var checkpoint = CancellationCheckpoint()
            while done < count {
                let slice = min(count - done, ImageCodecError.workBetweenCancellationChecks)
                try checkpoint.advance(by: slice)
                transform.applyInPlace(base + done * channels, count: slice)
                done += slice
            }
        }
        return pixels
    }
}
