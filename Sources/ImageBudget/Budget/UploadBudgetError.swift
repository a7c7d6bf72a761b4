import ImageCodec

/// Why a set could not be fitted.
public enum UploadBudgetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `compress` was given no sources.
    case noImages
    /// Even every image at the minimum size and quality weighs more than the budget.
    case budgetUnreachable(budget: Int, smallestTotal: Int)
    /// Sources that could not be read or decoded: all of them, in input order.
    case sourceFailures([UploadSourceFailure])
    /// ``UploadBudgetOptions/budget`` is not positive.
    case invalidBudget(Int)
    /// ``UploadBudgetOptions/minPixelSize`` is not positive or exceeds
    /// ``UploadBudgetOptions/maxPixelSize``.
    case invalidPixelSizes(minimum: Int, maximum: Int)
    /// ``UploadBudgetOptions/qualityRange`` reaches outside 1...100.
    case invalidQualityRange(ClosedRange<Int>)
    /// ``UploadBudgetOptions/worstDistortionSlack`` is negative, infinite or NaN.
    case invalidWorstDistortionSlack(Double)

    public var description: String {
        switch self {
        case .noImages: "no images to compress"
        case .budgetUnreachable(let budget, let smallest):
            "budget of \(budget) bytes cannot be met: the smallest achievable total is \(smallest) bytes"
        case .sourceFailures(let failures): failures.map(\.description).joined(separator: "; ")
        case .invalidBudget(let budget): "invalid budget \(budget): must be at least 1 byte"
        case .invalidPixelSizes(let minimum, let maximum):
            "invalid pixel sizes: need 1 ≤ minPixelSize (\(minimum)) ≤ maxPixelSize (\(maximum))"
        case .invalidQualityRange(let range): "invalid quality range \(range): must lie within 1...100"
        case .invalidWorstDistortionSlack(let slack): "invalid worstDistortionSlack \(slack): must be a finite number ≥ 0"
        }
    }
}

/// A source that could not be read, decoded or resized.
public struct UploadSourceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Position of the source in the array given to ``UploadCompressor/compress(_:)``.
    public var index: Int
    /// The source's ``UploadSource/name``.
    public var name: String
    /// What went wrong.
    public var error: ImageCodecError

    /// Builds a failure, e.g. for a fake in an app's own tests.
    public init(index: Int, name: String, error: ImageCodecError) {
        self.index = index
        self.name = name
        self.error = error
    }

    /// `name: error`; for a file that could not be read the error already names the path.
    public var description: String {
        if case .io = error { return error.description }
        return "\(name): \(error)"
    }
}
