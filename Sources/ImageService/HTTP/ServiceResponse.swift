import Foundation
import NIOCore

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
    /// The body; empty for `HEAD` and 304.
    public var body: Data {
        get { Data(payload.readableBytesView) }
        set { payload = ByteBuffer(bytes: newValue) }
    }
    /// The body as the server sends it. Responses made from one cached result share its
    /// storage (a `ByteBuffer` is copy-on-write): a result-cache hit copies no bytes.
    var payload: ByteBuffer
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
        self.init(status: status, headers: headers, payload: ByteBuffer(bytes: body), cacheLayer: cacheLayer)
    }

    /// A response whose body is `payload`, shared rather than copied.
    init(status: Int, headers: [(name: String, value: String)], payload: ByteBuffer, cacheLayer: String?) {
        self.status = status
        self.payload = payload
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
