#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A bare TCP connection that sends one GET and can be closed without reading the answer: a
/// client walking away mid-request, which no HTTP client library does on demand.
///
/// `@unchecked Sendable`: a test hands one to a task that trickles bytes into it, and reads or
/// closes it only after that task has ended.
final class RawConnection: @unchecked Sendable {
    private var descriptor: Int32
    /// The server closed the connection during the last `readUntilClosed`.
    private(set) var serverClosed = false
    /// Bytes the last `readUntilClosed` received (its text may be binary).
    private(set) var receivedBytes = 0

    /// Connects to 127.0.0.1:`port` and sends `GET path`.
    convenience init(port: Int, path: String) throws {
        try self.init(port: port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    /// Connects to 127.0.0.1:`port` and sends `request` as it is. `receiveBuffer`, when given,
    /// is the socket's SO_RCVBUF, set before connecting so that the window is small: a client
    /// that does not read then stalls the server's writes after a few kilobytes.
    init(port: Int, request text: String, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            guard setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw POSIXError(.EINVAL)
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let request = Array(text.utf8)
        guard Self.sendAll(descriptor, request) else { throw POSIXError(.EPIPE) }
    }

    /// Sends more bytes on the connection.
    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Self.sendAll(descriptor, bytes) else { throw POSIXError(.EPIPE) }
    }

    private static func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        #if canImport(Glibc)
        Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
        #else
        Darwin.send(descriptor, bytes, bytes.count, 0) == bytes.count
        #endif
    }

    /// Half-closes the connection: no more bytes from the client, which still reads.
    func shutdownWrite() {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Everything the server sends until it closes the connection (or `timeout` passes), as text.
    func readUntilClosed(timeout: Duration = .seconds(30)) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { break }
            guard poller.revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else {
                serverClosed = true
                break
            }
            received += buffer.prefix(count)
        }
        receivedBytes = received.count
        return String(decoding: received, as: UTF8.self)
    }

    /// `readUntilClosed` on a thread of its own: the blocking loop would otherwise hold one of
    /// the few cooperative threads the server under test needs to answer (on 2 cores, with
    /// another test blocking the other, the answer waited 10 s).
    func answer(timeout: Duration = .seconds(30)) async -> String {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.readUntilClosed(timeout: timeout)) }.start()
        }
    }

    /// Closes the connection (the client is gone).
    /// Reads `count` bytes (or until the server closes), `chunk` bytes at a time with `pause`
    /// between reads: a client on a slow link. Returns the bytes read.
    func readSlowly(_ count: Int, chunk: Int, pause: Duration, timeout: Duration) -> Int {
        var buffer = [UInt8](repeating: 0, count: chunk)
        var total = 0
        let deadline = ContinuousClock.now + timeout
        while total < count, ContinuousClock.now < deadline {
            let read = recv(descriptor, &buffer, min(chunk, count - total), 0)
            guard read > 0 else {
                serverClosed = true
                break
            }
            total += read
            Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds))
        }
        receivedBytes = total
        return total
    }

    func close() {
        guard descriptor >= 0 else { return }
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
        descriptor = -1
    }

    deinit { close() }
}
