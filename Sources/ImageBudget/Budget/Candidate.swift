import ImageCodec

/// One way to encode an image: a size, a JPEG quality (nil = PNG), the JPEG's chroma
/// resolution and how much finer (or coarser) its chroma is quantized than its luma.
struct Candidate: Hashable, Sendable {
    var longestSide: Int
    var quality: Int?
    var chroma: JPEGEncodingOptions.ChromaSubsampling = .s420
    /// Chroma tables at `quality + chromaOffset` (clamped to `chromaQualities`); 0: the same.
    var chromaOffset = 0
    /// Tenths of a quality step added to `quality` and the chroma quality (0...9): how
    /// `FractionalQuality` spends the bytes between two integer qualities.
    var tenths = 0

    /// Chroma qualities the search uses: below 20 chroma blocks go flat, above 95 the bytes
    /// explode for a fraction of a point.
    static let chromaQualities = 20...95

    /// The chroma quality to encode with, when it differs from `quality`.
    var chromaQuality: Int? {
        guard let quality, chromaOffset != 0 else { return nil }
        return min(max(quality + chromaOffset, Self.chromaQualities.lowerBound), Self.chromaQualities.upperBound)
    }

    /// This candidate with its chroma `step` qualities finer (negative: coarser).
    func steppingChroma(by step: Int) -> Candidate {
        var stepped = self
        stepped.chromaOffset += step
        return stepped
    }

    /// The candidates whose bytes and scores lie on one curve over `quality`.
    var family: Family { Family(longestSide: longestSide, chroma: chroma, chromaOffset: chromaOffset) }

    /// A size, chroma resolution and chroma offset: one curve over JPEG quality.
    struct Family: Hashable, Sendable {
        var longestSide: Int
        var chroma: JPEGEncodingOptions.ChromaSubsampling = .s420
        var chromaOffset = 0

        func candidate(quality: Int) -> Candidate {
            Candidate(longestSide: longestSide, quality: quality, chroma: chroma, chromaOffset: chromaOffset)
        }
    }
}
