import Foundation
import ImageCodec

/// One encoded image, ready to upload.
public struct CompressedUpload: Sendable, Hashable {
    /// Output file name: the source name with `.jpg` or `.png`, made unique within the set.
    public var fileName: String
    /// The source's name (``UploadSource/name``).
    public var sourceName: String
    /// Size of the source in bytes, as read.
    public var sourceBytes: Int
    /// The encoded image.
    public var data: Data
    /// Width of the output in pixels.
    public var width: Int
    /// Height of the output in pixels.
    public var height: Int
    /// JPEG quality, or nil for PNG.
    public var quality: Int?
    /// The fraction of a quality step (0 ..< 1, in tenths) the perceptual encoder added to
    /// `quality` and `chromaQuality` to spend what the integer qualities left of the budget
    /// (see `JPEGEncodingOptions.qualityFraction`); 0 for most images and every PNG.
    public var qualityFraction: Double
    /// `image/jpeg` or `image/png`.
    public var mimeType: String
    /// SSIM on luma against the source at display size (longest side `maxPixelSize`), both
    /// resampled there with Lanczos: 1 is indistinguishable.
    public var score: Double
    /// SSIMULACRA2 (0-100; 90 ≈ visually lossless, 70 high, 50 medium, 30 low) against the same
    /// reference at the same display size, in colour.
    public var ssimulacra2: Double
    /// The JPEG's chroma resolution (4:2:0 or 4:4:4, as its sampling factors say); nil for a
    /// PNG and for a grayscale JPEG.
    public var chroma: JPEGEncodingOptions.ChromaSubsampling?
    /// The quality the JPEG's chroma tables were scaled at (libjpeg's scaling of its standard
    /// chroma table): `quality` unless SSIMULACRA2 found finer or coarser chroma better for
    /// the set; nil for a PNG and for a grayscale JPEG.
    public var chromaQuality: Int?

    /// Size of ``data`` in bytes.
    public var bytes: Int { data.count }

    /// Builds a result, e.g. a fake for an app's own tests; the compressor makes the real ones.
    public init(
        fileName: String, sourceName: String, sourceBytes: Int, data: Data, width: Int, height: Int, quality: Int?,
        mimeType: String, score: Double, ssimulacra2: Double = 0, chroma: JPEGEncodingOptions.ChromaSubsampling? = nil,
        chromaQuality: Int? = nil, qualityFraction: Double = 0
    ) {
        self.qualityFraction = qualityFraction
        self.fileName = fileName
        self.sourceName = sourceName
        self.sourceBytes = sourceBytes
        self.data = data
        self.width = width
        self.height = height
        self.quality = quality
        self.mimeType = mimeType
        self.score = score
        self.ssimulacra2 = ssimulacra2
        self.chroma = chroma
        self.chromaQuality = chromaQuality
    }
}

/// The result of fitting a set: the images in input order, whose sizes add up to at most the budget.
public struct CompressedUploadSet: Sendable, Hashable {
    /// The outputs, in the order of the sources.
    public var images: [CompressedUpload]
    /// The budget the set was fitted into, in bytes.
    public var budget: Int
    /// Encodes performed while searching (a measure of the work done).
    public var encodeCount: Int

    /// The sum of the outputs' sizes; at most ``budget``.
    public var totalBytes: Int { images.reduce(0) { $0 + $1.bytes } }

    /// Builds a result, e.g. a fake for an app's own tests; the compressor makes the real ones.
    public init(images: [CompressedUpload], budget: Int, encodeCount: Int) {
        self.images = images
        self.budget = budget
        self.encodeCount = encodeCount
    }
}
