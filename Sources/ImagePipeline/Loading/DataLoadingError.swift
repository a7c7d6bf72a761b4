/// Why a transfer failed, with cases a caller can branch on (no transport's strings).
public enum DataLoadingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why no connection was made.
    public enum ConnectionFailure: Sendable, Hashable, CustomStringConvertible {
        /// The host name did not resolve.
        case hostNotFound
        /// The host refused the connection.
        case refused
        /// No route to the host, or the network is down.
        case unreachable
        /// TLS could not be established (handshake, certificate).
        case secureConnectionFailed
        /// Something else the transport reported, with its own code.
        case other(code: Int)

        public var description: String {
            switch self {
            case .hostNotFound: "host not found"
            case .refused: "connection refused"
            case .unreachable: "host unreachable"
            case .secureConnectionFailed: "secure connection failed"
            case .other(let code): "transport error \(code)"
            }
        }
    }

    /// The request was cancelled.
    case cancelled
    /// No response head within the connect timeout, no bytes within the idle timeout, or the
    /// whole transfer over the request timeout.
    case timedOut
    /// The host could not be reached.
    case cannotConnect(ConnectionFailure)
    /// The connection broke off before the response was complete.
    case connectionLost
    /// The connection ended after `received` of the `expected` body bytes.
    case truncatedBody(expected: Int, received: Int)
    /// The body is (or announces to be) larger than `limit` bytes.
    case bodyTooLarge(limit: Int)
    /// The loader's policy forbids the address it would connect to (a private, loopback or
    /// link-local address for a loader that guards against those, `host` being the name
    /// asked for), or the scheme.
    case notPermitted(host: String)
    /// More redirects than the loader follows, or a redirect without a usable `Location`.
    case redirectRefused
    /// The loader had no room for the transfer now — too many downloads waiting, no memory
    /// left for the body — and refused it rather than queue it without bound: try again later.
    case overloaded(String)
    /// Anything else the transport reported, with its own code.
    case other(code: Int)

    public var description: String {
        switch self {
        case .cancelled: "cancelled"
        case .timedOut: "timed out"
        case .cannotConnect(let reason): "cannot connect: \(reason)"
        case .connectionLost: "connection lost"
        case .truncatedBody(let expected, let received): "body cut short: \(received) of \(expected) bytes"
        case .bodyTooLarge(let limit): "body larger than \(limit) bytes"
        case .notPermitted(let host): "not permitted to connect to \(host)"
        case .redirectRefused: "too many redirects, or a redirect without a location"
        case .overloaded(let reason): "overloaded: \(reason)"
        case .other(let code): "transport error \(code)"
        }
    }
}
