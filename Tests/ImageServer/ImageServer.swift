import FlyingFox
import FlyingSocks
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP image server on the loopback interface, for tests and benchmarks: it serves images
/// with `ETag`, `Last-Modified` and `Cache-Control`, answers conditional requests with 304,
/// throttles each connection (latency and bandwidth), breaks on request (fault modes), and counts
/// what it saw and sent, including responses the client walked away from.
public final class ImageServer: Sendable {
    /// One image (or any body) at a path.
    public struct Resource: Sendable {
        public var data: Data
        public var contentType: String
        public var etag: String?
        public var lastModified: Date?
        public var cacheControl: String?
        /// A `Vary` header to send, if any.
        public var vary: String?
        /// Whether a 304 repeats `Cache-Control` (and `Vary`, `Last-Modified`) or carries only
        /// `ETag` and `Date`, as some servers send it (RFC 9111 §4.3.4: the rest is kept).
        public var notModifiedRepeatsHeaders: Bool

        /// A resource; by default with a strong ETag derived from the bytes and `max-age=3600`.
        public init(
            data: Data, contentType: String = "image/jpeg", etag: String? = nil, lastModified: Date? = nil,
            cacheControl: String? = "max-age=3600", vary: String? = nil, notModifiedRepeatsHeaders: Bool = true
        ) {
            self.data = data
            self.contentType = contentType
            self.etag = etag ?? "\"\(data.count)-\(data.reduce(UInt32(2166136261)) { ($0 ^ UInt32($1)) &* 16777619 })\""
            self.lastModified = lastModified
            self.cacheControl = cacheControl
            self.vary = vary
            self.notModifiedRepeatsHeaders = notModifiedRepeatsHeaders
        }
    }

    /// Ways a response can go wrong on purpose.
    public enum Fault: Sendable, Hashable {
        /// This status with a small HTML body.
        case status(Int)
        /// 200 with an HTML page instead of an image.
        case htmlPage
        /// The full `Content-Length` announced, half the body sent, then the connection closed.
        case truncatedBody
        /// Headers sent, then the connection closed before any body byte.
        case connectionReset
        /// One body byte per `interval`, forever: past any timeout.
        case slowDrip(interval: Duration)
        /// No `Content-Length` (chunked), so only counting while receiving can enforce a limit.
        case chunked
        /// No answer at all for this long (the connect timeout's case).
        case stall(Duration)
        /// A redirect (301, 302, 303, 307 or 308) to `location`.
        case redirect(status: Int = 302, location: String)
    }

    /// Throttling as a phone network imposes it: per connection, or one link all connections share.
    public struct Throttle: Sendable, Hashable {
        /// Time before the response head is sent.
        public var latency: Duration
        /// Body bytes per second; nil for unthrottled.
        public var bytesPerSecond: Int?
        /// True: `bytesPerSecond` is the total of all connections (a phone's one radio link, on
        /// which six parallel downloads each get a sixth); false: each connection gets it.
        public var sharesLink: Bool

        public init(latency: Duration = .zero, bytesPerSecond: Int? = nil, sharesLink: Bool = false) {
            self.latency = latency
            self.bytesPerSecond = bytesPerSecond
            self.sharesLink = sharesLink
        }

        /// 50 ms and 20 Mbit/s.
        public static let phone = Throttle(latency: .milliseconds(50), bytesPerSecond: 20_000_000 / 8)
    }

    /// What the server saw and did.
    public struct Statistics: Sendable, Hashable, Codable {
        public var requests = 0
        public var conditionalRequests = 0
        public var notModified = 0
        /// Body bytes written to sockets.
        public var bytesSent = 0
        /// Responses whose body the client stopped reading (it closed the connection).
        public var abortedResponses = 0
        public var requestsByPath: [String: Int] = [:]
        /// Header fields (lowercased names) of the latest request per path.
        public var lastHeaders: [String: [String: String]] = [:]
    }

    private let server: HTTPServer
    private let runner: Task<Void, any Error>
    private let state: State
    /// The loopback address the server listens on.
    public let address: String
    /// The port the server listens on.
    public let port: UInt16

    /// Starts a server on an ephemeral port of a loopback `address` (any of 127/8, so a test can
    /// have many origins that differ by address); `now` is the time its `Date` headers give.
    public static func start(
        address: String = "127.0.0.1", throttle: Throttle? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> ImageServer {
        precondition(address.hasPrefix("127."), "test servers listen on loopback only")
        let state = State(throttle: throttle, now: now)
        let server = HTTPServer(
            config: HTTPServer.Configuration(
                address: try .inet(ip4: address, port: 0), timeout: 600,
                logger: .disabled))
        await server.appendRoute("*") { request in await state.respond(to: request) }
        // Off the cooperative pool: tests that block its few threads (a synchronous decode, a
        // child process being waited for) must not stall the server their client is talking to.
        let runner = Task(executorPreference: DispatchTaskExecutor.shared) { try await server.run() }
        // Polled rather than waitUntilListening(timeout:), whose fixed 10 s runs out on a
        // machine busy with other tests (the thread sanitizer slows everything down a lot).
        for _ in 0..<6000 {
            if case .ip4(_, let port) = await server.listeningAddress {
                disableNagle(onListenerAt: port)
                return ImageServer(server: server, runner: runner, state: state, address: address, port: port)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        runner.cancel()
        throw URLError(.cannotConnectToHost)
    }

    private init(server: HTTPServer, runner: Task<Void, any Error>, state: State, address: String, port: UInt16) {
        self.server = server
        self.runner = runner
        self.state = state
        self.address = address
        self.port = port
    }

    deinit { runner.cancel() }

    /// `http://ADDRESS:PORT/path`.
    public func url(_ path: String) -> URL {
        URL(string: "http://\(address):\(port)/" + (path.hasPrefix("/") ? String(path.dropFirst()) : path))!
    }

    /// Holds every request for `path` (counted, then waiting before any byte of the answer)
    /// until `release(path)`: a test can then act while requests are known to be in flight,
    /// instead of racing a clock.
    public func hold(_ path: String) {
        state.update { $0.held.insert(Self.normalized(path)) }
    }

    /// Lets the held requests for `path` (and later ones) be answered.
    public func release(_ path: String) {
        let waiting = state.update { contents -> [CheckedContinuation<Void, Never>] in
            contents.held.remove(Self.normalized(path))
            return contents.waiting.removeValue(forKey: Self.normalized(path)) ?? []
        }
        waiting.forEach { $0.resume() }
    }

    /// Requests waiting at a hold.
    public var heldRequests: Int { state.read { $0.waiting.values.reduce(0) { $0 + $1.count } } }

    /// Serves `resource` at `path` (replacing what was there).
    public func serve(_ path: String, _ resource: Resource) {
        state.update { $0.resources[Self.normalized(path)] = resource }
    }

    /// Answers paths it has no resource for with what `upstream` answers for the same path,
    /// throttled like everything else here.
    public func forward(to upstream: URL?) {
        state.update { $0.upstream = upstream }
    }

    /// Serves `resource` at every path that has no resource of its own (nil: 404 there).
    public func serveEverywhereElse(_ resource: Resource?) {
        state.update { $0.fallback = resource }
    }

    /// Makes `path` fail with `fault` (nil: serve normally again).
    public func setFault(_ path: String, _ fault: Fault?) {
        state.update { $0.faults[Self.normalized(path)] = fault }
    }

    /// Changes the throttling of new responses.
    public func setThrottle(_ throttle: Throttle?) {
        state.update { $0.throttle = throttle }
    }

    /// What the server has seen so far; updated as sockets close, so tests poll it (`pollUntil`).
    public var statistics: Statistics { state.read { $0.statistics } }

    public func resetStatistics() { state.update { $0.statistics = Statistics() } }

    /// Requests seen for `path`.
    public func requests(_ path: String) -> Int { statistics.requestsByPath[Self.normalized(path), default: 0] }

    /// Stops listening and closes connections.
    public func stop() async {
        await server.stop(timeout: 1)
        runner.cancel()
    }

    static func normalized(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }
}

/// Sets TCP_NODELAY on the listening socket bound to `port` (Linux hands it on to every
/// accepted connection). FlyingFox writes a response's head and body separately and sets no
/// socket options: with Nagle's algorithm the body then waits for the client's delayed ACK,
/// 40 ms per response, which would swamp every loopback timing. It offers no hook for socket
/// options, so the descriptor is found among the process's own.
private func disableNagle(onListenerAt port: UInt16) {
    for descriptor in Int32(3)..<Int32(4096) {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0, address.sin_family == sa_family_t(AF_INET), UInt16(bigEndian: address.sin_port) == port else { continue }
        var listening: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening != 0 else { continue }
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// Runs tasks on Dispatch's global queue, whose threads are not Swift's cooperative pool.
final class DispatchTaskExecutor: TaskExecutor {
    static let shared = DispatchTaskExecutor()
    private let queue = DispatchQueue(label: "image-server", qos: .userInitiated, attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension ImageServer {
    /// The server's mutable state, behind a lock (handlers run on many tasks).
    final class State: @unchecked Sendable {
        struct Contents {
            var resources: [String: Resource] = [:]
            var fallback: Resource?
            var faults: [String: Fault] = [:]
            var throttle: Throttle?
            var statistics = Statistics()
            var held: Set<String> = []
            /// Paths with no resource of their own are fetched from here (a throttled front for
            /// another server: the phone's link to a thumbnail service).
            var upstream: URL?
            var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
            /// When the shared link has sent everything reserved on it so far.
            var linkFreeAt = ContinuousClock.now
        }

        private let lock = NSLock()
        private var contents = Contents()
        private let now: @Sendable () -> Date

        init(throttle: Throttle?, now: @escaping @Sendable () -> Date) {
            contents.throttle = throttle
            self.now = now
        }

        @discardableResult
        func update<T>(_ body: (inout Contents) -> T) -> T { lock.withLock { body(&contents) } }

        func read<T>(_ body: (Contents) -> T) -> T { lock.withLock { body(contents) } }

        func respond(to request: HTTPRequest) async -> HTTPResponse {
            let path = request.path
            if path.hasPrefix("/_control/") { return control(path, request) }
            let ifNoneMatch = request.headers[HTTPHeader("If-None-Match")]
            let ifModifiedSince = request.headers[HTTPHeader("If-Modified-Since")]
            var headers: [String: String] = [:]
            for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
            let (stored, fault, throttle, upstream) = read { ($0.resources[path] ?? $0.fallback, $0.faults[path], $0.throttle, $0.upstream) }
            var resource = stored
            if resource == nil, let upstream { resource = await Self.fetch(path, from: upstream) }
            update {
                $0.statistics.requests += 1
                $0.statistics.requestsByPath[path, default: 0] += 1
                $0.statistics.lastHeaders[path] = headers
                if ifNoneMatch != nil || ifModifiedSince != nil { $0.statistics.conditionalRequests += 1 }
            }
            if let latency = throttle?.latency, latency > .zero { try? await Task.sleep(for: latency) }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let holding = update { contents -> Bool in
                    guard contents.held.contains(path) else { return false }
                    contents.waiting[path, default: []].append(continuation)
                    return true
                }
                if !holding { continuation.resume() }
            }
            if let fault { return await respond(with: fault, resource: resource, throttle: throttle) }
            guard let resource else { return Self.page(status: .notFound) }

            var responseHeaders: HTTPHeaders = [.contentType: resource.contentType]
            if let etag = resource.etag { responseHeaders[HTTPHeader("ETag")] = etag }
            if let modified = resource.lastModified { responseHeaders[HTTPHeader("Last-Modified")] = Self.httpDate(modified) }
            if let cacheControl = resource.cacheControl { responseHeaders[HTTPHeader("Cache-Control")] = cacheControl }
            if let vary = resource.vary { responseHeaders[HTTPHeader("Vary")] = vary }
            responseHeaders[HTTPHeader("Date")] = Self.httpDate(now())
            if Self.notModified(resource, ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince) {
                update { $0.statistics.notModified += 1 }
                if !resource.notModifiedRepeatsHeaders {
                    var minimal: HTTPHeaders = [HTTPHeader("Date"): Self.httpDate(now())]
                    if let etag = resource.etag { minimal[HTTPHeader("ETag")] = etag }
                    return HTTPResponse(statusCode: .notModified, headers: minimal)
                }
                return HTTPResponse(statusCode: .notModified, headers: responseHeaders)
            }
            let body = throttled(resource.data, throttle)
            return HTTPResponse(statusCode: .ok, headers: responseHeaders, body: HTTPBodySequence(from: body, count: resource.data.count))
        }

        private func respond(with fault: Fault, resource: Resource?, throttle: Throttle?) async -> HTTPResponse {
            let data = resource?.data ?? Data(repeating: 0xAB, count: 100_000)
            let type = resource?.contentType ?? "image/jpeg"
            switch fault {
            case .status(let code):
                return Self.page(status: HTTPStatusCode(code, phrase: "Fault"))
            case .htmlPage:
                return Self.page(status: .ok)
            case .truncatedBody:
                let body = Body(data: data, bytesPerSecond: nil, stopAfter: data.count / 2, state: self)
                return HTTPResponse(statusCode: .ok, headers: [.contentType: type], body: HTTPBodySequence(from: body, count: data.count))
            case .connectionReset:
                let body = Body(data: data, bytesPerSecond: nil, stopAfter: 0, state: self)
                return HTTPResponse(statusCode: .ok, headers: [.contentType: type], body: HTTPBodySequence(from: body, count: data.count))
            case .slowDrip(let interval):
                let perSecond = max(1, Int(1 / (Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)))
                let body = Body(data: data, bytesPerSecond: perSecond, stopAfter: nil, state: self, chunk: 1)
                return HTTPResponse(statusCode: .ok, headers: [.contentType: type], body: HTTPBodySequence(from: body, count: data.count))
            case .chunked:
                let body = throttled(data, throttle)
                return HTTPResponse(statusCode: .ok, headers: [.contentType: type], body: HTTPBodySequence(from: body))
            case .stall(let duration):
                try? await Task.sleep(for: duration)
                return HTTPResponse(statusCode: .ok, headers: [.contentType: type], body: data)
            case .redirect(let status, let location):
                return HTTPResponse(statusCode: HTTPStatusCode(status, phrase: "Redirect"), headers: [HTTPHeader("Location"): location])
            }
        }

        /// `path` from the upstream server, as a resource (its type and caching headers kept);
        /// nil when the upstream does not answer 200, which becomes a 404 here.
        private static func fetch(_ path: String, from upstream: URL) async -> Resource? {
            guard let url = URL(string: upstream.absoluteString + path),
                let (data, response) = try? await URLSession.shared.data(from: url),
                let http = response as? HTTPURLResponse, http.statusCode == 200
            else { return nil }
            return Resource(
                data: data, contentType: http.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream",
                etag: http.value(forHTTPHeaderField: "ETag"), cacheControl: http.value(forHTTPHeaderField: "Cache-Control"))
        }

        /// `/_control/stats` (statistics as JSON) and `/_control/reset` (zero them), so a client
        /// in another process (a benchmark) can read what the server saw.
        private func control(_ path: String, _ request: HTTPRequest) -> HTTPResponse {
            switch path {
            case "/_control/stats":
                let statistics = read { $0.statistics }
                let body = (try? JSONEncoder().encode(statistics)) ?? Data()
                return HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json"], body: body)
            case "/_control/reset":
                update { $0.statistics = Statistics() }
                return HTTPResponse(statusCode: .ok)
            default:
                return Self.page(status: .notFound)
            }
        }

        private static func notModified(_ resource: Resource, ifNoneMatch: String?, ifModifiedSince: String?) -> Bool {
            if let ifNoneMatch {
                // If-None-Match takes precedence over If-Modified-Since (RFC 9110 §13.2.2).
                let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return tags.contains("*") || resource.etag.map(tags.contains) == true
            }
            if let ifModifiedSince, let since = parseDate(ifModifiedSince), let modified = resource.lastModified {
                return modified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
            }
            return false
        }

        private static func page(status: HTTPStatusCode) -> HTTPResponse {
            HTTPResponse(
                statusCode: status, headers: [.contentType: "text/html"],
                body: Data("<!doctype html><html><body><h1>\(status.code)</h1></body></html>".utf8))
        }

        static func httpDate(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter.string(from: date)
        }

        private static func parseDate(_ text: String) -> Date? {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            return formatter.date(from: text)
        }

        func sent(_ count: Int) { update { $0.statistics.bytesSent += count } }

        func aborted() { update { $0.statistics.abortedResponses += 1 } }

        /// A whole body paced as `throttle` says: per connection, or on the shared link.
        private func throttled(_ data: Data, _ throttle: Throttle?) -> Body {
            Body(data: data, bytesPerSecond: throttle?.bytesPerSecond, stopAfter: nil, state: self, sharesLink: throttle?.sharesLink ?? false)
        }

        /// Reserves the shared link for `bytes` after whatever is already reserved on it, and
        /// returns when they will have been sent: chunks of all connections interleave, so the
        /// connections share the bandwidth.
        func reserveLink(_ bytes: Int, bytesPerSecond: Int) -> ContinuousClock.Instant {
            update { contents in
                let start = Swift.max(contents.linkFreeAt, ContinuousClock.now)
                contents.linkFreeAt = start + .seconds(Double(bytes) / Double(bytesPerSecond))
                return contents.linkFreeAt
            }
        }
    }

    /// A response body streamed in paced chunks; it notices when the client stops reading.
    struct Body: AsyncBufferedSequence, Sendable {
        typealias Element = UInt8
        let data: Data
        let bytesPerSecond: Int?
        /// Closes the connection after this many bytes (a fault), instead of finishing.
        let stopAfter: Int?
        let state: State
        var chunk = 16_384
        /// Paced on the shared link rather than on this connection alone.
        var sharesLink = false

        func makeAsyncIterator() -> Iterator {
            Iterator(
                data: data, bytesPerSecond: bytesPerSecond, stopAfter: stopAfter,
                chunk: bytesPerSecond.map { Swift.min(chunk, Swift.max(1, $0 / 100)) } ?? chunk, sharesLink: sharesLink,
                tracker: Tracker(state: state))
        }

        /// Counts an abort when the body is dropped before its end (the socket write failed).
        final class Tracker: @unchecked Sendable {
            let state: State
            var finished = false
            var intentionallyStopped = false
            let started = ContinuousClock.now

            init(state: State) { self.state = state }

            deinit { if !finished && !intentionallyStopped { state.aborted() } }
        }

        struct Iterator: AsyncBufferedIteratorProtocol {
            let data: Data
            let bytesPerSecond: Int?
            let stopAfter: Int?
            let chunk: Int
            let sharesLink: Bool
            let tracker: Tracker
            var offset = 0

            mutating func next() async throws -> UInt8? {
                try await nextBuffer(suggested: 1)?.first
            }

            mutating func nextBuffer(suggested count: Int) async throws -> Data? {
                if let stopAfter, offset >= stopAfter {
                    tracker.intentionallyStopped = true
                    throw CancellationError()
                }
                guard offset < data.count else {
                    tracker.finished = true
                    return nil
                }
                var length = Swift.min(chunk, data.count - offset)
                if let stopAfter { length = Swift.min(length, stopAfter - offset) }
                if let bytesPerSecond {
                    // Pace against the start (or the link's schedule), so sleeping overhead does
                    // not accumulate.
                    let due =
                        sharesLink
                        ? tracker.state.reserveLink(length, bytesPerSecond: bytesPerSecond)
                        : tracker.started + .seconds(Double(offset + length) / Double(bytesPerSecond))
                    try await Task.sleep(until: due, clock: .continuous)
                }
                let slice = data.subdata(in: offset..<offset + length)
                offset += length
                tracker.state.sent(length)
                if offset == data.count { tracker.finished = true }
                return slice
            }
        }
    }
}
