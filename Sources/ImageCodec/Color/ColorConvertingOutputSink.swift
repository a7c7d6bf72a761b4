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

    func finish() throws(ImageCodecError) -> [UInt8] {
        var pixels = try next.finish()
        let (transform, count) = (transform, pixels.count / channels)
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            transform.applyInPlace(base, count: count)
        }
        return pixels
    }
}
