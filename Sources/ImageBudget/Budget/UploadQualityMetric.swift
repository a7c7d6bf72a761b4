/// The image-quality metric the upload allocator maximises.
public enum UploadQualityMetric: String, Sendable, Hashable, CaseIterable {
    /// SSIMULACRA2 (colour, multi-scale; 0-100): SSIM still does the bulk of the search, being
    /// ten times cheaper, and SSIMULACRA2 then chooses each JPEG's chroma resolution (4:2:0 or
    /// 4:4:4) and rebalances bytes towards the images it scores worst.
    case ssimulacra2
    /// SSIM on luma alone, every JPEG 4:2:0: the allocator before SSIMULACRA2, blind to colour.
    case ssim
}
