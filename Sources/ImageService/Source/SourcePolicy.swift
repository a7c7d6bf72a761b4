import Foundation

/// Which source URLs the service fetches: `http` and `https` only, optionally only from some
/// origins and paths, and never from an address that is loopback, private, link-local, CGNAT,
/// multicast or otherwise not public (checked on the address actually connected to, after DNS
/// and after every redirect) unless such addresses are allowed.
public struct SourcePolicy: Sendable, Hashable {
    /// Where sources may come from (scheme, host and port exactly, the path at or under a
    /// `/` boundary); empty: any http or https URL.
    public var allowedSources: [AllowedSource]
    /// Lets sources resolve to loopback, private (RFC 1918, unique local), CGNAT and the other
    /// non-public ranges — an origin on the same network — but not link-local ones.
    public var allowsPrivateAddresses: Bool
    /// Lets sources resolve to link-local addresses (`169.254.0.0/16`, `fe80::/10`) and the
    /// cloud metadata endpoints (`169.254.169.254`, `fd00:ec2::254`), which hand out a cloud
    /// machine's credentials: only with an origin that really lives there.
    public var allowsLinkLocalAddresses: Bool
    /// Exact `address:port` pairs exempt from the address check, whatever they are (a sidecar
    /// origin on loopback; the tests' origin) — narrower than `allowsPrivateAddresses`.
    public var trustedEndpoints: Set<String>

    /// A policy; by default any public http(s) source.
    public init(
        allowedSources: [AllowedSource] = [], allowsPrivateAddresses: Bool = false, allowsLinkLocalAddresses: Bool = false,
        trustedEndpoints: Set<String> = []
    ) {
        self.allowedSources = allowedSources
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.allowsLinkLocalAddresses = allowsLinkLocalAddresses
        self.trustedEndpoints = trustedEndpoints
    }

    /// Why `url` may not be fetched by its form alone (scheme, host, prefix), or nil.
    public func refusal(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return "not an http or https URL" }
        guard let host = url.host, !host.isEmpty else { return "no host" }
        guard url.user == nil, url.password == nil else { return "credentials in the URL" }
        if !allowedSources.isEmpty, !allowedSources.contains(where: { $0.allows(url) }) {
            return "not under an allowed source"
        }
        return nil
    }

    /// Why connecting to `address` on `port` is refused, or nil.
    public func refusal(of address: IPAddress, port: Int) -> String? {
        guard let refusal = address.refusal else { return nil }
        let endpoint = address.description.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        if trustedEndpoints.contains(endpoint) { return nil }
        if address.isLinkLocal { return allowsLinkLocalAddresses ? nil : refusal }
        return allowsPrivateAddresses ? nil : refusal
    }
}
