import Foundation

/// The service's answer: status, headers and body, plus what the request log and the metrics
/// report about it.
public struct ServiceResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields in the order they are sent. `Content-Length` is always among them (for a
    /// `HEAD` request it is the length a `GET` would send).
    public var headers: [(name: String, value: String)] {
        get { headerList.map { ($0.name, $0.value) } }
        set { headerList = newValue.map { Header(name: $0.name, value: $0.value) } }
    }
    /// The body; empty for `HEAD` and 304. Responses made from one result share its bytes
    /// (`Data` is copy-on-write): a hit copies none. Bytes the service made or read for a
    /// request stay charged to its memory budget for as long as anything holds them — the
    /// result cache, or the server writing this response — and no longer.
    public var body: Data
    /// Where the image came from (`result-memory`, `result-disk`, `source-memory`, `source-disk`,
    /// `origin`, `revalidated`), nil when no image was involved.
    public var cacheLayer: String?

    private struct Header: Sendable, Hashable {
        var name: String
        var value: String
    }

    private var headerList: [Header] = []

    /// A response with `headers` in order.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data(), cacheLayer: String? = nil) {
        self.status = status
        self.body = body
        self.cacheLayer = cacheLayer
        self.headers = headers
    }

    /// The value of the first header named `name` (any case).
    public func header(_ name: String) -> String? {
        headerList.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// A one-line plain-text error that no cache may keep; a 429 says when to retry.
    static func error(_ error: ServiceError, headers: [(name: String, value: String)] = []) -> ServiceResponse {
        let body = Data((error.message + "\n").utf8)
        let extra = headers + (error.status == 429 ? [("Retry-After", "1")] : [])
        return ServiceResponse(
            status: error.status,
            headers: [
                ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count)),
                ("Cache-Control", "no-store")
            ] + extra,
            body: body)
    }

    /// A small plain-text answer (`/health`, `/ready`).
    static func text(_ status: Int, _ text: String) -> ServiceResponse {
        let body = Data((text + "\n").utf8)
        return ServiceResponse(
            status: status,
            headers: [
                ("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", String(body.count)),
                ("Cache-Control", "no-store")
            ], body: body)
    }
}
