#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A TCP listener on one port of both loopback addresses (127.0.0.1 and ::1) that accepts
/// connections, counts them and closes them at once: a test that must prove a fetcher never
/// connected somewhere points it here and expects zero.
public final class ConnectionCounter: Sendable {
    /// The port on both addresses.
    public let port: UInt16
    private let descriptors: [Int32]
    private let state = State()

    /// Accept counts and the loop's stop flag, shared with the accepting thread.
    private final class State: @unchecked Sendable {
        // @unchecked: both fields are only touched while `lock` is held.
        let lock = NSLock()
        var accepted = 0
        var running = true
    }

    /// Listens on an ephemeral port of 127.0.0.1, and on the same port of ::1 when the machine
    /// has IPv6 loopback.
    public init() throws {
        let v4 = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(v4, $0, length) == 0 && getsockname(v4, $0, &length) == 0 }
        }
        guard v4 >= 0, bound, listen(v4, 64) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        port = UInt16(bigEndian: address.sin_port)
        var descriptors = [v4]
        let v6 = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        if v6 >= 0 {
            var on: Int32 = 1
            setsockopt(v6, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
            var address6 = sockaddr_in6()
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_addr = in6addr_loopback
            address6.sin6_port = port.bigEndian
            let bound6 = withUnsafePointer(to: &address6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(v6, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
            }
            if bound6, listen(v6, 64) == 0 { descriptors.append(v6) } else { close(v6) }
        }
        self.descriptors = descriptors
        let state = state
        let listeners = descriptors
        Thread {
            var polls = listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            while state.lock.withLock({ state.running }) {
                guard poll(&polls, nfds_t(polls.count), 20) > 0 else { continue }
                for index in polls.indices where polls[index].revents & Int16(POLLIN) != 0 {
                    let connection = accept(polls[index].fd, nil, nil)
                    guard connection >= 0 else { continue }
                    close(connection)
                    state.lock.withLock { state.accepted += 1 }
                }
            }
            listeners.forEach { close($0) }
        }.start()
    }

    deinit { stop() }

    /// True when the listener also took ::1.
    public var listensOnIPv6: Bool { descriptors.count == 2 }

    /// Connections accepted so far.
    public var connections: Int { state.lock.withLock { state.accepted } }

    /// Stops listening (the sockets close within a poll interval).
    public func stop() {
        state.lock.withLock { state.running = false }
    }
}
