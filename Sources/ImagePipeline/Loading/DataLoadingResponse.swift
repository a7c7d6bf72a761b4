import Foundation

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
