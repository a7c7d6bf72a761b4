/// One HTTP request as the service sees it: no sockets, so the whole service can be driven
/// from a test.
public struct ServiceRequest: Sendable, Hashable {
    /// `GET` or `HEAD` (anything else is answered 405).
    public var method: String
    /// The path as received: percent-encoding intact, without the query (what a signature signs).
    public var path: String
    /// The `If-None-Match` header, if any.
    public var ifNoneMatch: String?

    /// A request.
    public init(method: String = "GET", path: String, ifNoneMatch: String? = nil) {
        self.method = method
        self.path = path
        self.ifNoneMatch = ifNoneMatch
    }

    /// True for `HEAD`: the response is sent without its body.
    public var isHead: Bool { method == "HEAD" }
}
