import Foundation
import ImageCodec

/// How a set of images is fitted into an upload budget.
public struct UploadBudgetOptions: Sendable, Hashable {
    /// Total bytes all encoded images may weigh together.
    public var budget: Int
    /// Longest side of an output; sources are never enlarged.
    public var maxPixelSize: Int
    /// Below this longest side, images lose quality instead of resolution.
    public var minPixelSize: Int
    /// JPEG qualities the allocator may choose from. Both encoders' qualities look about the
    /// same (the perceptual encoder's tables were scaled so), so one range covers both.
    public var qualityRange: ClosedRange<Int>
    /// Keep a PNG source as PNG when that is smaller than the chosen JPEG (screenshots,
    /// flat graphics). Otherwise every output is JPEG, alpha flattened on white.
    public var keepsPNGWhenSmaller: Bool
    /// What the allocator maximises: SSIMULACRA2 (the default; it sees colour and chooses each
    /// image's chroma resolution) or luma SSIM with 4:2:0 everywhere (the behaviour before).
    public var metric: UploadQualityMetric
    /// How much more distortion (1 − SSIM) than the best achievable the worst image may keep
    /// so that the others gain more: 0.2 lets a worst score of 0.90 settle at 0.88, and one
    /// of 0.97 at 0.964. Relative because SSIM saturates: near 1 a small difference is a large
    /// step (0.2 is about 1 dB of SSIM, −10·log10(1 − SSIM)), while holding a low worst score
    /// to its last 0.01 can cost every other image a lot of bytes. 0 means strictly max-min.
    /// On SSIMULACRA2, whose scale does not saturate, the same setting is 5 × slack points
    /// below the best worst score (1 point at 0.2).
    public var worstDistortionSlack: Double
    /// The JPEG encoder: the perceptual one by default, which reaches a higher SSIMULACRA2 at
    /// the same bytes; `.libjpegTurbo` reproduces the outputs of earlier releases (and keeps
    /// their luma SSIM floor in the search, see "Fitting photos into a budget").
    public var jpegEncoder: JPEGEncodingOptions.Encoder
    /// Luma quantization of the `.libjpegTurbo` encoder's outputs. `.ssimTuned` spends fewer
    /// bytes for the same SSIM than the standard table, and chroma is encoded as with the
    /// standard one. The perceptual encoder has its own tables.
    public var quantization: JPEGQuantization
    /// Limits that protect decoding from hostile or oversized sources.
    public var limits: DecodingLimits

    /// Options with the defaults of the registration API: a 300 KB budget, 1280 px longest side.
    public init(
        budget: Int = 300_000, maxPixelSize: Int = 1280, minPixelSize: Int = 640, qualityRange: ClosedRange<Int> = 30...92,
        keepsPNGWhenSmaller: Bool = false, metric: UploadQualityMetric = .ssimulacra2, worstDistortionSlack: Double = 0.2,
        quantization: JPEGQuantization = .ssimTuned,
        limits: DecodingLimits = DecodingLimits(), jpegEncoder: JPEGEncodingOptions.Encoder = .perceptual
    ) {
        self.jpegEncoder = jpegEncoder
        self.budget = budget
        self.maxPixelSize = maxPixelSize
        self.minPixelSize = minPixelSize
        self.qualityRange = qualityRange
        self.keepsPNGWhenSmaller = keepsPNGWhenSmaller
        self.metric = metric
        self.worstDistortionSlack = worstDistortionSlack
        self.quantization = quantization
        self.limits = limits
    }
}

/// One image to upload: a file, or bytes with a name.
public enum UploadSource: Sendable, Hashable {
    /// A JPEG, PNG, WebP, HEIC or AVIF file, read when the set is compressed.
    case file(URL)
    /// JPEG, PNG, WebP, HEIC or AVIF bytes already in memory; `name` stands in for a file name.
    case data(Data, name: String)

    /// What results and errors call this source: the file's last path component, or the name
    /// given with the data. ``CompressedUpload/fileName`` is made from it, with the extension
    /// replaced by the output format's.
    public var name: String {
        switch self {
        case .file(let url): url.lastPathComponent
        case .data(_, let name): name
        }
    }
}
