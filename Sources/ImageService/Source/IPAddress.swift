#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, as `getaddrinfo` gives it: what a source fetch would connect to,
/// and what the source policy judges.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, in host byte order (`203.0.113.7` is `0xCB007107`).
    case v4(UInt32)
    /// An IPv6 address: its 16 bytes, in network order.
    case v6([UInt8])

    /// Parses a numeric address in its usual text form (`203.0.113.7`, `2001:db8::1`, with or
    /// without brackets); nil for anything else.
    public init?(_ text: String) {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    /// The text form (`inet_ntop`): what a connection to this address is made with.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1) // small: an address
        switch self {
        case .v4(let value):
            var address = in_addr(s_addr: value.bigEndian)
            inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
        case .v6(let bytes):
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
            inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Why a fetch must not connect here, or nil for a public unicast address: loopback,
    /// private (RFC 1918, IPv6 unique local), link-local (cloud metadata at 169.254.169.254),
    /// CGNAT, multicast, broadcast, unspecified, reserved and documentation ranges, and IPv6
    /// forms that embed an IPv4 address (mapped, compatible, 6to4, NAT64) judged by that
    /// address; Teredo is refused outright.
    public var refusal: String? {
        switch self {
        case .v4(let value): Self.v4Refusal(value)
        case .v6(let bytes): Self.v6Refusal(bytes)
        }
    }

    /// True for link-local addresses (`169.254.0.0/16`, `fe80::/10`, and IPv6 forms embedding an
    /// IPv4 one) and cloud metadata endpoints (AWS's `fd00:ec2::254`, Alibaba's
    /// `100.100.100.200`, Azure's WireServer `168.63.129.16`): what
    /// ``SourcePolicy/allowsPrivateAddresses`` does not open.
    public var isLinkLocal: Bool {
        switch self {
        case .v4(let value): return Self.isLinkLocalV4(value)
        case .v6(let bytes):
            if bytes == Self.awsMetadataV6 { return true }
            if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return true }
            return Self.embeddedV4(bytes).map(Self.isLinkLocalV4) ?? false
        }
    }

    private static func isLinkLocalV4(_ value: UInt32) -> Bool {
        value >> 16 == 0xA9FE || metadataV4.contains { $0.base == value }
    }

    /// IPv4 cloud metadata endpoints outside 169.254.0.0/16: Alibaba Cloud's (inside CGNAT) and
    /// Azure's WireServer (a public address, reachable only from inside Azure).
    private static let metadataV4: [(base: UInt32, bits: Int, reason: String)] = [
        (0x6464_64C8, 32, "cloud metadata (100.100.100.200)"), (0xA83F_8110, 32, "cloud metadata (168.63.129.16)")
    ]

    /// `fd00:ec2::254`.
    private static let awsMetadataV6: [UInt8] = [0xFD, 0x00, 0x0E, 0xC2] + [UInt8](repeating: 0, count: 10) + [0x02, 0x54] // small: an address

    /// The IPv4 address an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address carries.
    private static func embeddedV4(_ b: [UInt8]) -> UInt32? {
        func at(_ offset: Int) -> UInt32 {
            UInt32(b[offset]) << 24 | UInt32(b[offset + 1]) << 16 | UInt32(b[offset + 2]) << 8 | UInt32(b[offset + 3])
        }
        let zeros = [UInt8](repeating: 0, count: 10) // small: an address
        if b.starts(with: zeros + [0xFF, 0xFF]) || b.starts(with: zeros + [0, 0]) { return at(12) }
        if b.starts(with: [0x00, 0x64, 0xFF, 0x9B] + [UInt8](repeating: 0, count: 8)) { return at(12) } // small: an address
        if b.starts(with: [0x20, 0x02]) { return at(2) }
        return nil
    }

    private static let v4Ranges: [(base: UInt32, bits: Int, reason: String)] = [
        (0x0000_0000, 8, "unspecified (0.0.0.0/8)"), (0x0A00_0000, 8, "private (10.0.0.0/8)"),
        (0x6440_0000, 10, "carrier-grade NAT (100.64.0.0/10)"), (0x7F00_0000, 8, "loopback (127.0.0.0/8)"),
        (0xA9FE_0000, 16, "link-local (169.254.0.0/16)"), (0xAC10_0000, 12, "private (172.16.0.0/12)"),
        (0xC000_0000, 24, "IETF protocol assignments (192.0.0.0/24)"), (0xC000_0200, 24, "documentation (192.0.2.0/24)"),
        (0xC058_6300, 24, "6to4 relay anycast (192.88.99.0/24)"), (0xC0A8_0000, 16, "private (192.168.0.0/16)"),
        (0xC612_0000, 15, "benchmarking (198.18.0.0/15)"), (0xC633_6400, 24, "documentation (198.51.100.0/24)"),
        (0xCB00_7100, 24, "documentation (203.0.113.0/24)"), (0xE000_0000, 4, "multicast (224.0.0.0/4)"),
        (0xF000_0000, 4, "reserved or broadcast (240.0.0.0/4)")
    ]

    private static func v4Refusal(_ value: UInt32) -> String? {
        (metadataV4 + v4Ranges).first { value >> (32 - $0.bits) == $0.base >> (32 - $0.bits) }?.reason
    }

    private static func v6Refusal(_ b: [UInt8]) -> String? {
        func prefix(_ bytes: [UInt8]) -> Bool { b.starts(with: bytes) }
        func embedded(at offset: Int) -> UInt32 {
            UInt32(b[offset]) << 24 | UInt32(b[offset + 1]) << 16 | UInt32(b[offset + 2]) << 8 | UInt32(b[offset + 3])
        }
        let zeros = [UInt8](repeating: 0, count: 10) // small: an address
        if b == [UInt8](repeating: 0, count: 16) { return "unspecified (::)" } // small: an address
        if b == [UInt8](repeating: 0, count: 15) + [1] { return "loopback (::1)" } // small: an address
        if prefix(zeros + [0xFF, 0xFF]) { return v4Refusal(embedded(at: 12)).map { "IPv4-mapped, \($0)" } }
        if prefix(zeros + [0, 0]) { return v4Refusal(embedded(at: 12)).map { "IPv4-compatible, \($0)" } ?? "IPv4-compatible (::/96)" }
        let nat64 = [0x00, 0x64, 0xFF, 0x9B] + [UInt8](repeating: 0, count: 8) // small: an address
        if prefix(nat64) { return v4Refusal(embedded(at: 12)).map { "NAT64, \($0)" } }
        if prefix([0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]) { return "local-use NAT64 (64:ff9b:1::/48)" }
        if prefix([0x20, 0x02]) { return v4Refusal(embedded(at: 2)).map { "6to4, \($0)" } }
        if prefix([0x20, 0x01, 0x00, 0x00]) { return "Teredo (2001::/32)" }
        if prefix([0x20, 0x01, 0x0D, 0xB8]) { return "documentation (2001:db8::/32)" }
        if prefix([0x01, 0x00, 0, 0, 0, 0, 0, 0]) { return "discard (100::/64)" }
        if b[0] & 0xFE == 0xFC { return "unique local (fc00::/7)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local (fe80::/10)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "site-local (fec0::/10)" }
        if b[0] == 0xFF { return "multicast (ff00::/8)" }
        return nil
    }
}
