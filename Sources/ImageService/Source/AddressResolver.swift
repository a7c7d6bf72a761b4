#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import ImagePipeline
import Locking

/// Turns a source's host name into the addresses a fetch may connect to. The seam under
/// `GuardedDataLoader`: tests answer slowly, never, or with addresses of their choosing.
protocol AddressResolving: Sendable {
    /// The addresses of `host`, in the order to try them; empty when the name does not resolve.
    /// Returns at once (with `.cancelled`) when the calling task is cancelled, whatever the
    /// lookup is doing.
    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress]
}

/// Host names to addresses with the system resolver (`getaddrinfo`, which also reads numeric
/// forms such as `127.1` and `2130706433`).
///
/// `getaddrinfo` cannot be cancelled, and a resolver that never answers holds its thread for
/// the system's own timeouts: so lookups run on a dispatch queue of their own, at most
/// `concurrentLookups` at once (a stuck resolver takes those threads, never the cooperative
/// pool's or the decoders'), and the caller stops waiting as soon as its task is cancelled —
/// by the download timeout, say — leaving the lookup to finish on its own.
struct SystemAddressResolver: AddressResolving {
    static let concurrentLookups = 16
    private static let queue = DispatchQueue(label: "image-engine.dns", attributes: .concurrent)
    private static let slots = DispatchSemaphore(value: concurrentLookups)

    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        let answer = OnceAnswer()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                answer.install(continuation)
                Self.queue.async {
                    // Waits here, on the DNS queue, while other lookups hold every slot.
                    Self.slots.wait()
                    let addresses = answer.isAbandoned ? [] : Self.lookUp(host)
                    Self.slots.signal()
                    answer.resolve(.success(addresses))
                }
            }
        } onCancel: {
            answer.resolve(.failure(.cancelled))
        }
        return try answer.result.get()
    }

    private static func lookUp(_ host: String) -> [IPAddress] {
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

/// The first of a lookup's answer and its caller's cancellation, delivered once.
private final class OnceAnswer: @unchecked Sendable {
    // @unchecked: the state is only touched while `lock` is held.
    private let lock = Lock()
    private var continuation: CheckedContinuation<Void, Never>?
    private var outcome: Result<[IPAddress], DataLoadingError>?

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = lock.withLock { () -> Bool in
            if outcome != nil { return true }
            self.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func resolve(_ result: Result<[IPAddress], DataLoadingError>) {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard outcome == nil else { return nil }
            outcome = result
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume()
    }

    /// True once the caller has stopped waiting: a lookup not yet started can be skipped.
    var isAbandoned: Bool { lock.withLock { outcome != nil } }

    var result: Result<[IPAddress], DataLoadingError> { lock.withLock { outcome ?? .failure(.cancelled) } }
}
