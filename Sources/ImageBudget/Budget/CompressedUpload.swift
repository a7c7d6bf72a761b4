import Foundation
import ImageCodec

/// One encoded image, ready to upload.
public struct CompressedUpload: Sendable, Hashable {
    /// Output file name: the source name with `.jpg` or `.png`, made unique within the set.
    public var fileName: String
    public var sourceName: String
    public var sourceBytes: Int
    public var data: Data
    public var width: Int
    public var height: Int
    /// JPEG quality, or nil for PNG.
    public var quality: Int?
    public var mimeType: String
    /// SSIM on luma against the source at display size (longest side `maxPixelSize`), both
    /// resampled there with Lanczos: 1 is indistinguishable.
    public var score: Double

    public var bytes: Int { data.count }
}

/// The result of fitting a set: the images in input order, whose sizes add up to at most the budget.
public struct CompressedUploadSet: Sendable, Hashable {
    public var images: [CompressedUpload]
    public var budget: Int
    /// Encodes performed while searching (a measure of the work done).
    public var encodeCount: Int

    public var totalBytes: Int { images.reduce(0) { $0 + $1.bytes } }
}

/// Why a set could not be fitted.
public enum UploadBudgetError: Error, Sendable, Hashable, CustomStringConvertible {
    case noImages
    /// Even every image at the minimum size and quality weighs more than the budget.
    case budgetUnreachable(budget: Int, smallestTotal: Int)
    /// A source could not be read or decoded.
    case source(name: String, ImageCodecError)
    case invalidOptions(String)

    public var description: String {
        switch self {
        case .noImages: "no images to compress"
        case .budgetUnreachable(let budget, let smallest):
            "budget of \(budget) bytes cannot be met: the smallest achievable total is \(smallest) bytes"
        case .source(let name, let error): "\(name): \(error)"
        case .invalidOptions(let message): "invalid options: \(message)"
        }
    }
}
