import ImageCodec
import ImagePipeline

/// Why a request was not answered with an image: the status code and a one-line message that
/// names the cause without any of the server's internals (no paths, no stack, no key).
public struct ServiceError: Error, Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// One line for the response body.
    public var message: String

    /// An error with `status` and `message`.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    static func badRequest(_ message: String) -> ServiceError { ServiceError(status: 400, message: "bad request: " + message) }
    static func dotSegment(_ segment: String) -> ServiceError {
        badRequest("the path has a \"\(segment)\" segment (%2E, %2F and %5C read as '.', '/' and '\\'), which caches in front resolve")
    }
    static let forbidden = ServiceError(status: 403, message: "forbidden: missing or invalid signature")
    static func sourceNotAllowed(_ reason: String) -> ServiceError { ServiceError(status: 404, message: "source not allowed: " + reason) }
    static let expired = ServiceError(status: 410, message: "gone: the URL has expired")
    static let pathTooLong = ServiceError(status: 414, message: "the path is too long")
    static let queueFull = ServiceError(status: 429, message: "too many requests: the processing queue is full")
    static let memoryFull = ServiceError(status: 429, message: "too many requests: no memory left for the request now")
    static func needsMoreMemory(_ bytes: Int, budget: Int) -> ServiceError {
        ServiceError(
            status: 422, message: "unprocessable: decoding the source needs \(bytes) bytes, more than the service's memory budget of \(budget)")
    }
    static let draining = ServiceError(status: 503, message: "unavailable: the server is shutting down")
    static func outputTooLarge(width: Int, height: Int, format: String, limit: Int = ThumbnailService.maximumLossyOutputPixels) -> ServiceError {
        ServiceError(status: 422, message: "unprocessable: a \(width)×\(height) \(format) is more than \(limit) pixels")
    }
    static func byteCapUnreachable(cap: Int, smallest: Int) -> ServiceError {
        ServiceError(status: 422, message: "unprocessable: the smallest output is \(smallest) bytes, more than mb:\(cap)")
    }
    static func deadlineExceeded(_ seconds: Double) -> ServiceError {
        let text = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return ServiceError(status: 504, message: "gateway timeout: the request was not answered within \(text) s")
    }
    static let cancelled = ServiceError(status: 503, message: "unavailable: the request was cancelled")
    /// The client went away before its answer (nginx's and imgproxy's 499): nobody receives it,
    /// but the log and the metrics tell it from a server that could not answer.
    static let clientClosedRequest = ServiceError(status: 499, message: "client closed the request")
    static let methodNotAllowed = ServiceError(status: 405, message: "method not allowed: GET or HEAD")

    /// The answer for a failed source fetch or decode.
    init(_ error: ImagePipelineError) {
        switch error {
        case .cancelled, .network(.cancelled):
            self = .cancelled
        case .network(.notPermitted):
            self = .sourceNotAllowed("the source address is not allowed")
        case .network(.timedOut):
            self.init(status: 504, message: "gateway timeout: the source did not answer in time")
        case .network(.bodyTooLarge(let limit)), .tooLarge(let limit):
            self.init(status: 422, message: "source too large: more than \(limit) bytes")
        case .network(.overloaded(let reason)):
            self.init(status: 429, message: "too many requests: \(reason)")
        case .network(.redirectRefused):
            self.init(status: 502, message: "bad gateway: too many redirects, or a redirect without a location")
        case .network(let transfer):
            self.init(status: 502, message: "bad gateway: \(transfer)")
        case .badStatus(let code) where code == 404 || code == 410:
            self.init(status: 404, message: "not found: the source answered \(code)")
        case .badStatus(let code):
            self.init(status: 502, message: "bad gateway: the source answered \(code)")
        case .notAnImage(let what):
            self.init(status: 422, message: "unprocessable: the source is not a JPEG, PNG, WebP, HEIC or AVIF (\(what))")
        case .decodingFailed(let codec), .invalidRequest(let codec):
            self.init(codec)
        case .notCached:
            self.init(status: 502, message: "bad gateway: the source could not be loaded")
        }
    }

    /// The answer for a source the codec refused.
    init(_ error: ImageCodecError) {
        switch error {
        case .tooLarge(let width, let height, let limit):
            self.init(status: 422, message: "source too large: \(width)×\(height) is more than \(limit) pixels")
        case .dimensionTooLarge(let width, let height, let limit):
            self.init(status: 422, message: "source too large: \(width)×\(height) has a side over \(limit) pixels")
        case .outOfMemory:
            self.init(status: 503, message: "unavailable: out of memory")
        case .memoryBudgetExceeded:
            self = .memoryFull
        case .io:
            self.init(status: 500, message: "internal error")
        case .cancelled:
            self = .cancelled
        default:
            self.init(status: 422, message: "unprocessable: \(error)")
        }
    }
}

extension ServiceError {
    /// Why a request's source could not be had, as `image_engine_source_failures_total` labels
    /// it: refusals (the policy's, or the service's own back-pressure) apart from failures of
    /// the origin or the network. Nil for a cancelled fetch and for a source that arrived but is
    /// not a usable image (the render's failure, not the fetch's).
    static func sourceFailureReason(_ error: ImagePipelineError) -> String? {
        switch error {
        case .cancelled, .network(.cancelled): nil
        case .network(.notPermitted): "refused"
        case .network(.overloaded): "overloaded"
        case .network(.timedOut): "timeout"
        case .network(.bodyTooLarge), .tooLarge: "too_large"
        case .badStatus: "origin_status"
        case .network, .notCached: "transfer"
        case .notAnImage, .decodingFailed, .invalidRequest: nil
        }
    }
}
