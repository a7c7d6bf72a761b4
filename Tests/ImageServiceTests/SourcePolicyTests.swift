import Foundation
@testable import ImageService
import Testing

@Suite("Service: source policy and refused addresses")
struct SourcePolicyTests {
    @Test(
        "non-public addresses are refused, with the range named",
        arguments: [
            ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"),
            ("192.168.1.1", "private"), ("169.254.169.254", "link-local"), ("100.64.0.1", "carrier-grade NAT"), ("0.0.0.0", "unspecified"),
            ("224.0.0.1", "multicast"), ("255.255.255.255", "broadcast"), ("198.18.0.1", "benchmarking"), ("192.0.2.1", "documentation"),
            ("::", "unspecified"), ("::1", "loopback"), ("fe80::1", "link-local"), ("fc00::1", "unique local"), ("fd12:3456::1", "unique local"),
            ("ff02::1", "multicast"), ("::ffff:127.0.0.1", "IPv4-mapped, loopback"), ("::ffff:169.254.169.254", "IPv4-mapped, link-local"),
            ("::127.0.0.1", "IPv4-compatible"), ("64:ff9b::a00:1", "NAT64, private"), ("64:ff9b::7f00:1", "NAT64, loopback"),
            ("2002:7f00:1::", "6to4, loopback"), ("2002:a9fe:a9fe::1", "6to4, link-local"), ("2001:0:4136:e378::1", "Teredo"),
            ("2001:db8::1", "documentation"), ("fec0::1", "site-local")
        ])
    func refused(_ text: String, _ reason: String) throws {
        let address = try #require(IPAddress(text))
        let refusal = try #require(address.refusal, "\(text) must be refused")
        #expect(refusal.contains(reason), "\(text): \(refusal)")
        #expect(SourcePolicy().refusal(of: address, port: 80) != nil)
        // Private addresses open with --allow-private-sources; link-local ones (cloud metadata)
        // only with --allow-link-local-sources.
        let linkLocal = reason.contains("link-local")
        #expect(address.isLinkLocal == linkLocal, "\(text)")
        #expect((SourcePolicy(allowsPrivateAddresses: true).refusal(of: address, port: 80) == nil) == !linkLocal, "\(text)")
        #expect((SourcePolicy(allowsLinkLocalAddresses: true).refusal(of: address, port: 80) == nil) == linkLocal, "\(text)")
    }

    @Test("cloud metadata endpoints (AWS, GCP, Azure, Alibaba) are link-local: refused with only --allow-private-sources")
    func metadata() throws {
        for text in [
            "169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "fe80::a9fe:a9fe", "100.100.100.200",
            "::ffff:100.100.100.200", "168.63.129.16"
        ] {
            let address = try #require(IPAddress(text))
            #expect(address.isLinkLocal, "\(text)")
            #expect(SourcePolicy(allowsPrivateAddresses: true).refusal(of: address, port: 80) != nil, "\(text)")
            #expect(SourcePolicy(allowsPrivateAddresses: true, allowsLinkLocalAddresses: true).refusal(of: address, port: 80) == nil)
        }
        #expect(!IPAddress("fd00:ec2::253")!.isLinkLocal && IPAddress("fd00:ec2::253")!.refusal != nil, "other unique local: private")
    }

    @Test(
        "an allowed source matches scheme, host and port exactly and the path at a / boundary",
        arguments: [
            ("https://images.example.com", "https://images.example.com/p/1.jpg", true),
            ("https://images.example.com", "https://images.example.com.attacker.net/p/1.jpg", false),
            ("https://images.example.com", "https://IMAGES.example.com/p/1.jpg", true),
            ("https://images.example.com", "http://images.example.com/p/1.jpg", false),
            ("https://images.example.com", "https://images.example.com:8443/p/1.jpg", false),
            ("https://images.example.com", "https://images.example.com:443/p/1.jpg", true),
            ("https://images.example.com:8443", "https://images.example.com:8443/a.jpg", true),
            ("https://images.example.com/p", "https://images.example.com/p/1.jpg", true),
            ("https://images.example.com/p/", "https://images.example.com/p/1.jpg", true),
            ("https://images.example.com/p", "https://images.example.com/private/1.jpg", false),
            ("https://images.example.com/p", "https://images.example.com/p", true),
            ("https://images.example.com/p", "https://images.example.com/p/../secret.jpg", false),
            ("https://images.example.com/p", "https://images.example.com/p/%2e%2e/secret.jpg", false),
            ("https://images.example.com/p", "https://user@images.example.com/p/1.jpg", false),
            // Origins that decode before they normalise would read these as /private/….
            ("https://images.example.com/public/", "https://images.example.com/public/..%2Fprivate/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/..%2fprivate/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/..%5Cprivate/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/..%252Fprivate/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/%2e%2e%2fprivate/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/..;/private/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/a;b/1.jpg", false),
            ("https://images.example.com/public/", "https://images.example.com/public/caf%C3%A9%20au%20lait.jpg", true),
            ("https://images.example.com/public/", "https://images.example.com/public/a%2Bb/1%25.jpg", true)
        ])
    func allowedSource(_ allowed: String, _ url: String, _ expected: Bool) throws {
        let source = try #require(AllowedSource(allowed))
        let policy = SourcePolicy(allowedSources: [source])
        #expect((policy.refusal(of: try #require(URL(string: url))) == nil) == expected, "\(allowed) for \(url)")
    }

    @Test(
        "--allowed-source values that are not an origin and a path are refused",
        arguments: [
            "images.example.com", "ftp://images.example.com/", "https://user:pw@images.example.com/", "https://images.example.com/?q=1",
            "https://images.example.com/a/../b", "https:///p", ""
        ])
    func malformedAllowedSource(_ text: String) {
        #expect(AllowedSource(text) == nil, "\(text)")
    }

    @Test(
        "public unicast addresses, and public IPv4 inside IPv6 forms, are allowed",
        arguments: [
            "8.8.8.8", "93.184.216.34", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2a00:1450:4001::200e",
            "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"
        ])
    func allowed(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.refusal == nil, "\(text): \(address.refusal ?? "")")
    }

    @Test(
        "the resolver reads every numeric spelling of loopback the way a connect would",
        arguments: [
            "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "localhost"
        ])
    func numericSpellings(_ host: String) async {
        let addresses = (try? await SystemAddressResolver().addresses(of: host)) ?? []
        #expect(addresses.contains(.v4(0x7F00_0001)), "\(host) → \(addresses)")
        #expect(addresses.allSatisfy { $0.refusal != nil })
    }

    @Test(
        "only http and https, no credentials, and the allowed prefixes",
        arguments: [
            ("file:///etc/passwd", "http"), ("ftp://example.com/a.jpg", "http"), ("gopher://example.com/", "http"),
            ("data:image/png;base64,AAAA", "http"),
            ("http://user:secret@example.com/a.jpg", "credentials"), ("https://other.example/a.jpg", "allowed source")
        ])
    func urlForms(_ url: String, _ reason: String) throws {
        let policy = SourcePolicy(allowedSources: [AllowedSource("https://cdn.example.com/")!, AllowedSource("http://example.com/")!])
        let parsed = try #require(URL(string: url))
        let refusal = try #require(policy.refusal(of: parsed))
        #expect(refusal.contains(reason), "\(url): \(refusal)")
        #expect(policy.refusal(of: URL(string: "https://cdn.example.com/p/a.jpg")!) == nil)
        #expect(SourcePolicy().refusal(of: URL(string: "http://example.com/a.jpg")!) == nil)
    }

    @Test("a trusted endpoint is exempt on its own port only")
    func trustedEndpoint() {
        let policy = SourcePolicy(trustedEndpoints: ["127.0.0.1:8081", "[::1]:9000"])
        #expect(policy.refusal(of: .v4(0x7F00_0001), port: 8081) == nil)
        #expect(policy.refusal(of: .v4(0x7F00_0001), port: 8082) != nil)
        #expect(policy.refusal(of: IPAddress("::1")!, port: 9000) == nil)
        #expect(policy.refusal(of: IPAddress("::1")!, port: 8081) != nil)
    }
}
