/// One HTTP request as the service sees it: no sockets, so the whole service can be driven
/// from a test.
public struct ServiceRequest: Sendable, Hashable {
    /// `GET` or `HEAD` (anything else is answered 405).
    public var method: String
    /// The path as received: percent-encoding intact, without the query (what a signature signs).
    public var path: String
    /// The query string, if the request had one (without the `?`). The service reads nothing
    /// from it, so an answer to a request with one is not for shared caches (`private`).
    public var query: String?
    /// The `If-None-Match` header, if any.
    public var ifNoneMatch: String?
    /// The `Accept` header, if any: with `--auto-webp` or `--auto-avif`, what the client takes.
    public var accept: String?

    /// A request.
    public init(method: String = "GET", path: String, query: String? = nil, ifNoneMatch: String? = nil, accept: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.ifNoneMatch = ifNoneMatch
        self.accept = accept
    }

    /// True when `Accept` names `mediaType` (`image/webp`, `image/avif`) with a quality above
    /// zero (a wildcard does not count: browsers that send `*/*` alone include old ones that
    /// cannot show either).
    func accepts(_ mediaType: String) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").contains { range in
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == mediaType else { return false }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
    }

    /// True for `HEAD`: the response is sent without its body.
    public var isHead: Bool { method == "HEAD" }
}
