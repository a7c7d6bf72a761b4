#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ImagePipeline

/// Turns a source's host name into the addresses a fetch may connect to. The seam under
/// `GuardedDataLoader`: tests answer slowly, never, or with addresses of their choosing.
protocol AddressResolving: Sendable {
    /// The addresses of `host`, in the order to try them; empty when the name does not resolve.
    /// Returns at once (with `.cancelled`) when the calling task is cancelled, whatever the
    /// lookup is doing.
    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress]
}

/// Host names to addresses with the system resolver (`getaddrinfo`, which also reads numeric
/// forms such as `127.1` and `2130706433`), through a `LookupPool`: threads of its own, a share
/// of them per zone, one lookup per name at a time, short positive and negative caches, and
/// callers that stop waiting the moment their task is cancelled.
struct SystemAddressResolver: AddressResolving {
    let pool: LookupPool

    /// A resolver whose pool reports its lookups running and waiting to `onChange`.
    init(limits: LookupPool.Limits = LookupPool.Limits(), onChange: @escaping @Sendable (LookupPool.Snapshot) -> Void = { _ in }) {
        pool = LookupPool(limits: limits, lookUp: Self.lookUp, onChange: onChange)
    }

    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        return try await pool.addresses(of: host.lowercased())
    }

    static func lookUp(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(current.pointee.ai_family) {
                case AF_INET:
                    let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                    addresses.append(.v4(UInt32(bigEndian: value)))
                case AF_INET6:
                    var bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(.v6(withUnsafeBytes(of: &bytes) { Array($0) }))
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        var seen = Set<IPAddress>()
        return addresses.filter { seen.insert($0).inserted }
    }
}
