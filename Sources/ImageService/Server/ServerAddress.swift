/// A `HOST:PORT` to listen on (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:0` for any free port).
public struct ServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address, without brackets.
    public var host: String
    /// The port; 0 asks the system for a free one.
    public var port: Int

    /// An address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (IPv6 hosts in brackets); nil when either part is missing or the
    /// port is not 0-65535.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.contains(":") == text.hasPrefix("[") else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
