import Foundation

/// Which source URLs the service fetches: `http` and `https` only, optionally only under some
/// prefixes, and never from an address that is loopback, private, link-local, CGNAT, multicast
/// or otherwise not public (checked on the address actually connected to, after DNS and after
/// every redirect) unless private sources are allowed.
public struct SourcePolicy: Sendable, Hashable {
    /// URL prefixes a source must start with; empty: any http or https URL.
    public var allowedPrefixes: [String]
    /// Lets sources resolve to private and loopback addresses (an origin on the same network).
    public var allowsPrivateAddresses: Bool
    /// Exact `address:port` pairs exempt from the address check, whatever they are (a sidecar
    /// origin on loopback; the tests' origin) — narrower than `allowsPrivateAddresses`.
    public var trustedEndpoints: Set<String>

    /// A policy; by default any public http(s) source.
    public init(allowedPrefixes: [String] = [], allowsPrivateAddresses: Bool = false, trustedEndpoints: Set<String> = []) {
        self.allowedPrefixes = allowedPrefixes
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.trustedEndpoints = trustedEndpoints
    }

    /// Why `url` may not be fetched by its form alone (scheme, host, prefix), or nil.
    public func refusal(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return "not an http or https URL" }
        guard let host = url.host, !host.isEmpty else { return "no host" }
        guard url.user == nil, url.password == nil else { return "credentials in the URL" }
        if !allowedPrefixes.isEmpty, !allowedPrefixes.contains(where: { url.absoluteString.hasPrefix($0) }) {
            return "not under an allowed source prefix"
        }
        return nil
    }

    /// Why connecting to `address` on `port` is refused, or nil.
    public func refusal(of address: IPAddress, port: Int) -> String? {
        if allowsPrivateAddresses { return nil }
        let endpoint = address.description.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        if trustedEndpoints.contains(endpoint) { return nil }
        return address.refusal
    }
}
