import Foundation

/// One `--allowed-source` value, parsed: a source must have exactly its scheme, host and port,
/// and a path under its path at a `/` boundary. A plain string prefix would let
/// `https://images.example.com` allow `https://images.example.com.attacker.net/…` and
/// `https://images.example.com/p` allow `https://images.example.com/private/…`.
public struct AllowedSource: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`.
    public let scheme: String
    /// Lowercased.
    public let host: String
    /// The explicit port, or the scheme's default.
    public let port: Int
    /// The path a source must be at or under; `/` allows the whole host. No trailing `/`
    /// except for the root.
    public let path: String

    /// Parses `https://host[:port][/path]`; nil for anything else (another scheme, credentials,
    /// a query or fragment, dot segments).
    public init?(_ text: String) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.password == nil, url.query == nil, url.fragment == nil,
            let path = Self.normalisedPath(of: url)
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// True when `url` has this scheme, host and port and a path at or under this path.
    public func allows(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == self.scheme, url.host?.lowercased() == host,
            (url.port ?? (scheme == "https" ? 443 : 80)) == port, let urlPath = Self.normalisedPath(of: url)
        else { return false }
        return path == "/" || urlPath == path || urlPath.hasPrefix(path + "/")
    }

    public var description: String {
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(host)\(port == defaultPort ? "" : ":\(port)")\(path)"
    }

    /// The URL's path as sent, `/` when empty; nil when an origin could read it as a path
    /// outside the one checked: a segment that is `.` or `..` once percent-decoded (`%2e%2e`),
    /// an encoded separator (`%2F`, `%5C`, or one encoded twice, `%252F`) or a backslash, which
    /// origins that decode before they normalise (nginx, Python's `http.server`, IIS) turn into a
    /// `/` — `public/..%2Fprivate` — and a `;` (Tomcat and Jetty drop path parameters, so `..;`
    /// is `..`).
    private static func normalisedPath(of url: URL) -> String? {
        let path = url.path(percentEncoded: true)
        guard !path.contains("\\"), !path.contains(";") else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for segment in segments {
            var decoded = String(segment)
            // Decoded until it stops changing (at most a few rounds: each one shortens it).
            while let once = decoded.removingPercentEncoding, once != decoded { decoded = once }
            guard decoded != ".", decoded != "..", !decoded.contains("/"), !decoded.contains("\\"), !decoded.contains(";") else {
                return nil
            }
        }
        return path.isEmpty ? "/" : path
    }
}
