extension ImageEncoder {
    /// Bytes an encoder holds beyond the bitmap it is handed, for an output of `width × height`
    /// in `format`: its working planes, its own state and the encoded output. What a caller
    /// reserves, beside the decode plan, before it encodes (a server's memory budget).
    ///
    /// Measured as peak RSS over a JPEG of the same pixels (2048² and 1024² outputs of a noisy
    /// photo-like source): WebP at method 6 held about 13 bytes a pixel more; PNG's buffers stay
    /// under its bitmap. AVIF through libaom holds most on pure noise, its worst case: about 30
    /// bytes a pixel at speeds 6 to 9 (avifenc on 2048² and 2896² noise, its own input
    /// subtracted), and 16 MB of its own state. JPEG's are counted, not measured: the perceptual encoder's coefficient
    /// arrays take 2 bytes a coefficient (6 bytes a pixel at 4:4:4, the most), plus the output.
    public static func plannedBytes(width: Int, height: Int, channels: Int, format: ImageFormat) -> Int {
        let pixels = max(0, width).multipliedReportingOverflow(by: max(0, height))
        guard !pixels.overflow else { return .max }
        let (perPixel, fixed): (Int, Int) =
            switch format {
            case .jpeg: (7, 1 << 20)
            case .png: (max(1, channels), 1 << 20)
            case .webp: (14, 2 << 20)
            case .avif: (32, 16 << 20)
            case .heic, .gif: (0, 0)
            }
        let (bytes, overflow) = pixels.partialValue.multipliedReportingOverflow(by: perPixel)
        return overflow ? .max : bytes.addingReportingOverflow(fixed).overflow ? .max : bytes + fixed
    }
}
