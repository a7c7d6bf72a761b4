import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads the bytes of a request: the seam where tests and clients inject their own transport.
///
/// The pipeline calls it from a task that is cancelled when nobody wants the image any more;
/// a loader must then stop the transfer (close the connection) and throw `.cancelled`.
public protocol DataLoading: Sendable {
    /// Sends `request` and returns the whole response, whatever its status. Throws
    /// `.bodyTooLarge` as soon as the body announces or reaches more than `maximumBodySize`
    /// bytes (without receiving the rest), and `.truncatedBody` when the connection ends before
    /// the announced `Content-Length`. `progress` is called as bytes arrive.
    func loadData(for request: URLRequest, maximumBodySize: Int,
                  progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void)
        async throws(DataLoadingError) -> DataLoadingResponse
}

/// A complete HTTP response.
public struct DataLoadingResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var statusCode: Int
    /// Header fields, names in lowercase.
    public var headers: [String: String]
    /// The whole body.
    public var data: Data
    /// The URL answered, after redirects.
    public var url: URL?

    /// A response; header names are lowercased.
    public init(statusCode: Int, headers: [String: String] = [:], data: Data = Data(), url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.data = data
        self.url = url
    }

    /// The value of the header `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a transfer failed.
public enum DataLoadingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request was cancelled.
    case cancelled
    /// No response head within the connect timeout, no bytes within the idle timeout, or the
    /// whole transfer over the request timeout.
    case timedOut
    /// The host could not be reached (refused, unknown, unreachable).
    case cannotConnect(String)
    /// The connection broke off.
    case connectionLost(String)
    /// The connection ended after `received` of the `expected` body bytes.
    case truncatedBody(expected: Int, received: Int)
    /// The body is (or announces to be) larger than `limit` bytes.
    case bodyTooLarge(limit: Int)
    /// Anything else the transport reported.
    case other(String)

    public var description: String {
        switch self {
        case .cancelled: "cancelled"
        case .timedOut: "timed out"
        case .cannotConnect(let reason): "cannot connect: \(reason)"
        case .connectionLost(let reason): "connection lost: \(reason)"
        case .truncatedBody(let expected, let received): "body cut short: \(received) of \(expected) bytes"
        case .bodyTooLarge(let limit): "body larger than \(limit) bytes"
        case .other(let reason): reason
        }
    }
}
