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
    /// JPEG qualities the allocator may choose from.
    public var qualityRange: ClosedRange<Int>
    /// Keep a PNG source as PNG when that is smaller than the chosen JPEG (screenshots,
    /// flat graphics). Otherwise every output is JPEG, alpha flattened on white.
    public var keepsPNGWhenSmaller: Bool
    /// How far (in SSIM) the worst image may stay below the best achievable worst score so
    /// that the others gain more. Differences this small are not visible, while holding the
    /// worst image to the last 0.005 can cost every other image a lot of bytes.
    public var worstScoreTolerance: Double
    public var limits: DecodingLimits

    public init(budget: Int = 300_000, maxPixelSize: Int = 1280, minPixelSize: Int = 640, qualityRange: ClosedRange<Int> = 30...92,
                keepsPNGWhenSmaller: Bool = false, worstScoreTolerance: Double = 0.005, limits: DecodingLimits = DecodingLimits()) {
        self.budget = budget
        self.maxPixelSize = maxPixelSize
        self.minPixelSize = minPixelSize
        self.qualityRange = qualityRange
        self.keepsPNGWhenSmaller = keepsPNGWhenSmaller
        self.worstScoreTolerance = worstScoreTolerance
        self.limits = limits
    }
}

/// One image to upload: a file, or bytes with a name.
public enum UploadSource: Sendable, Hashable {
    case file(URL)
    case data(Data, name: String)

    /// The name outputs are derived from (`IMG_0001.HEIC.jpg` would be confusing, so the
    /// extension is replaced).
    public var name: String {
        switch self {
        case .file(let url): url.lastPathComponent
        case .data(_, let name): name
        }
    }
}
