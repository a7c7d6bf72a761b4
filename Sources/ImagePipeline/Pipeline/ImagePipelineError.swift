import ImageCodec

/// Why an image could not be loaded.
public enum ImagePipelineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request was cancelled (the task, the `ImageTask`, or the prefetcher stopped it).
    case cancelled
    /// The transfer failed: no connection, a timeout, a dropped connection, a body shorter
    /// than its `Content-Length`.
    case network(DataLoadingError)
    /// The server answered with a status outside 200-299 (or a 304 that was not asked for).
    case badStatus(Int)
    /// The body is not a JPEG, PNG, WebP, HEIC or AVIF (judged from its bytes, not from `Content-Type`).
    case notAnImage(ImageCodecError.UnsupportedFormat)
    /// The body is larger than `Configuration.maximumResponseSize` (checked while receiving).
    case tooLarge(limit: Int)
    /// The bytes are an image the codec refused (corrupt, truncated, over the pixel limit).
    case decodingFailed(ImageCodecError)
    /// `returnCacheDataDontLoad` and neither cache has the image.
    case notCached
    /// The request itself cannot be met, whatever the bytes: a resize the codec refuses (a zero
    /// side for `.fill`, a focus point outside 0…1), or an output over the pixel limits (an
    /// enlarge too far). Checked before any I/O where the request alone decides it; cached
    /// bytes are never dropped for it.
    case invalidRequest(ImageCodecError)

    public var description: String {
        switch self {
        case .cancelled: "cancelled"
        case .network(let error): "network error: \(error)"
        case .badStatus(let code): "HTTP status \(code)"
        case .notAnImage(let what): "not an image: \(what)"
        case .tooLarge(let limit): "response larger than \(limit) bytes"
        case .decodingFailed(let error): "cannot decode: \(error)"
        case .notCached: "not cached (and loading was not allowed)"
        case .invalidRequest(let error): "invalid request: \(error)"
        }
    }
}

extension ImagePipelineError {
    /// Whether the error is the bytes' fault (they are not an image, or not one the codec can
    /// decode), so that cached bytes which produced it are of no use to anyone and are dropped.
    /// Not for the request's errors, running out of memory, or cancellation.
    var condemnsBytes: Bool {
        switch self {
        case .notAnImage: true
        // A limit is this pipeline's: another with higher limits, sharing the disk cache, may
        // decode the same bytes.
        case .decodingFailed(.outOfMemory), .decodingFailed(.memoryBudgetExceeded), .decodingFailed(.invalidArgument), .decodingFailed(.tooLarge),
            .decodingFailed(.dimensionTooLarge), .decodingFailed(.limitExceeded):
            false
        case .decodingFailed: true
        case .cancelled, .network, .badStatus, .tooLarge, .notCached, .invalidRequest: false
        }
    }
}
