import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCodec
import ImagePipeline
import Locking
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The service's `DataLoading`: fetches a source only from addresses its `SourcePolicy`
/// allows, checking the address it will actually connect to — after DNS, and again after
/// every redirect (followed here, at most `maximumRedirects`, never by the HTTP client) — so
/// there is no window between checking a name and connecting to what it resolves to.
///
/// The connection is made with AsyncHTTPClient to the checked address (its `dnsOverride`),
/// keeping the name for `Host` and TLS (SNI and the certificate check). Downloads are admitted
/// by `DownloadAdmission` (in flight, per host, a bounded wait beyond); DNS and the transfer
/// share one deadline; body bytes are reserved in the memory budget as they arrive and stay
/// reserved for as long as the downloaded bytes live.
public final class GuardedDataLoader: DataLoading, @unchecked Sendable {
    // @unchecked: `clients` is only touched while `lock` is held; the rest is immutable.
    /// What a fetch may do.
    public struct Configuration: Sendable {
        /// Which sources and addresses are allowed.
        public var policy: SourcePolicy
        /// Seconds a whole fetch (the DNS lookups and every redirect included) may take, from
        /// the moment it is admitted.
        public var timeout: TimeInterval
        /// Redirects followed before giving up.
        public var maximumRedirects: Int
        /// Downloads in flight at once (`--max-downloads`).
        public var maximumDownloads: Int
        /// Downloads in flight from one host at once (`--max-downloads-per-host`).
        public var maximumDownloadsPerHost: Int
        /// Downloads that may wait beyond those before more are refused (`--download-queue`).
        public var downloadQueueLimit: Int
        /// Bytes a second a body must average once `slowTransferGrace` has passed since its
        /// response began (0: no minimum): a trickle ends there rather than at `timeout`,
        /// giving back its slot and its memory.
        public var minimumTransferRate: Int
        /// How long a body may take before its rate is judged.
        public var slowTransferGrace: Duration = .seconds(2)

        /// A configuration; by default 10 s, 5 redirects, 64 downloads, 8 per host, 256 waiting,
        /// 16 KiB/s.
        public init(
            policy: SourcePolicy, timeout: TimeInterval = 10, maximumRedirects: Int = 5, maximumDownloads: Int = 64,
            maximumDownloadsPerHost: Int = 8, downloadQueueLimit: Int = 256, minimumTransferRate: Int = 16 << 10
        ) {
            self.minimumTransferRate = minimumTransferRate
            self.policy = policy
            self.timeout = timeout
            self.maximumRedirects = maximumRedirects
            self.maximumDownloads = maximumDownloads
            self.maximumDownloadsPerHost = maximumDownloadsPerHost
            self.downloadQueueLimit = downloadQueueLimit
        }
    }

    /// What one download came to, for the metrics: body bytes, how long it took (the admission
    /// wait excluded), and whether it failed.
    struct Outcome: Sendable {
        var bytes: Int
        var duration: Duration
        var failed: Bool
    }

    /// The configuration fetches run with.
    public let configuration: Configuration
    let admission: DownloadAdmission
    private let resolver: any AddressResolving
    /// Where body bytes are reserved, within each host's share; nil counts nothing.
    let memory: HostMemoryShare?
    private let onDownload: @Sendable (Outcome) -> Void
    private let lock = Lock()
    private var pool = ClientPool()
    /// Idle clients kept beyond those in use.
    static let idleClientLimit = 32

    /// A loader with `configuration`.
    public convenience init(configuration: Configuration) {
        self.init(configuration: configuration, memory: nil)
    }

    init(
        configuration: Configuration, resolver: any AddressResolving = SystemAddressResolver(), memory: MemoryBudget?,
        largestSource: Int = 0,
        onAdmissionChange: @escaping @Sendable (DownloadAdmission.Snapshot) -> Void = { _ in },
        onDownload: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.resolver = resolver
        // One source of the largest size a host may always have, whatever the quarter comes to.
        self.memory = memory.map { HostMemoryShare(budget: $0, floor: largestSource + SourceBuffer.firstStep) }
        self.onDownload = onDownload
        admission = DownloadAdmission(
            maximum: configuration.maximumDownloads, perHost: configuration.maximumDownloadsPerHost,
            queueLimit: configuration.downloadQueueLimit, onChange: onAdmissionChange)
    }

    deinit {
        for client in pool.all { client.shutdown { _ in } }
    }

    public func loadData(
        for request: URLRequest, maximumBodySize: Int,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        guard let url = request.url, let host = url.host else { throw .notPermitted(host: "") }
        // Shares are per origin: a host's registrable domain, so that case variants and
        // subdomains of one domain share one.
        let origin = PublicSuffixList.system.registrableDomain(of: host)
        do throws(DownloadAdmission.Refusal) {
            try await admission.admit(host: origin)
        } catch .queueFull {
            throw .overloaded("too many source downloads waiting")
        } catch {
            throw .cancelled
        }
        defer { admission.release(host: origin) }
        let started = ContinuousClock.now
        let timeout = configuration.timeout
        let meter = TransferMeter()
        let (rate, grace) = (configuration.minimumTransferRate, configuration.slowTransferGrace)
        let outcome = await withTaskGroup(of: Result<DataLoadingResponse, DataLoadingError>?.self) { group in
            group.addTask {
                await Result.capturing { () throws(DataLoadingError) in
                    try await self.fetch(request, from: url, limit: maximumBodySize, meter: meter, progress: progress)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return Task.isCancelled ? nil : .failure(.timedOut)
            }
            // The minimum rate, judged on a timer: a body that stops altogether sends no chunk
            // for a check on arrival to look at, and would keep its slot and memory until the
            // whole download's timeout.
            if rate > 0 {
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: TransferMeter.checkInterval)
                        if meter.isSlower(than: rate, after: grace) { return .failure(.timedOut) }
                    }
                    return nil
                }
            }
            var first: Result<DataLoadingResponse, DataLoadingError>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .failure(.cancelled)
        }
        let response = outcome.map { $0.data.count }
        onDownload(Outcome(bytes: (try? response.get()) ?? 0, duration: ContinuousClock.now - started, failed: (try? response.get()) == nil))
        if Task.isCancelled { throw .cancelled }
        return try outcome.get()
    }

    private func fetch(
        _ original: URLRequest, from start: URL, limit: Int, meter: TransferMeter,
        progress: @escaping @Sendable (Int, Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        var url = start
        var redirects = 0
        while true {
            let policy = configuration.policy
            guard policy.refusal(of: url) == nil, let host = url.host else { throw .notPermitted(host: url.host ?? url.absoluteString) }
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            let addresses = try await resolver.addresses(of: host)
            guard !addresses.isEmpty else { throw .cannotConnect(.hostNotFound) }
            // Every address the name has must be allowed: a name that mixes a public address
            // with a private one is refused rather than half trusted.
            guard addresses.allSatisfy({ policy.refusal(of: $0, port: port) == nil }) else {
                throw .notPermitted(host: host)
            }
            if Task.isCancelled { throw .cancelled }
            var request = HTTPClientRequest(url: url.absoluteString)
            for (name, value) in original.allHTTPHeaderFields ?? [:] { request.headers.replaceOrAdd(name: name, value: value) }
            let (response, lease) = try await execute(request, host: host, port: port, addresses: addresses)
            defer { release(lease) }
            let status = Int(response.status.code)
            if [301, 302, 303, 307, 308].contains(status) {
                guard redirects < configuration.maximumRedirects, let location = response.headers.first(name: "location"),
                    let next = URL(string: location, relativeTo: url)?.absoluteURL
                else { throw .redirectRefused }
                redirects += 1
                url = next
                continue
            }
            var headers: [String: String] = [:]
            for (name, value) in response.headers { headers[name.lowercased()] = headers[name.lowercased()].map { $0 + ", " + value } ?? value }
            let announced = response.headers.first(name: "content-length").flatMap(Int.init)
            if let announced, announced > limit { throw .bodyTooLarge(limit: limit) }
            let body = try SourceBuffer(
                capacity: announced ?? 0, maximum: limit, memory: memory, host: PublicSuffixList.system.registrableDomain(of: host))
            meter.bodyStarted()
            do {
                for try await chunk in response.body {
                    guard body.count + chunk.readableBytes <= limit else { throw DataLoadingError.bodyTooLarge(limit: limit) }
                    try chunk.withUnsafeReadableBytes { (bytes) throws(DataLoadingError) in try body.append(bytes) }
                    meter.received(chunk.readableBytes)
                    progress(body.count, announced)
                }
            } catch let error as DataLoadingError {
                throw error
            } catch {
                if let announced, body.count < announced { throw .truncatedBody(expected: announced, received: body.count) }
                throw Self.map(error)
            }
            if let announced, body.count < announced, status != 304 { throw .truncatedBody(expected: announced, received: body.count) }
            return DataLoadingResponse(statusCode: status, headers: headers, data: body.data(), url: url)
        }
    }

    // MARK: Clients

    /// Sends `request` through a client for `host` that connects to one of `addresses` (all
    /// allowed), in order: a connection that cannot be made moves on to the next address.
    /// The lease keeps the client from eviction until released.
    private func execute(
        _ request: HTTPClientRequest, host: String, port: Int, addresses: [IPAddress]
    )
        async throws(DataLoadingError) -> (HTTPClientResponse, ClientPool.Lease)
    {
        var lastError = DataLoadingError.cannotConnect(.unreachable)
        for address in preferredOrder(addresses, host: host, port: port) {
            let lease = lease(host: host, port: port, address: address)
            do {
                return (try await lease.client.execute(request, deadline: .distantFuture), lease)
            } catch {
                release(lease)
                let mapped = Self.map(error)
                guard Self.isConnectFailure(error, mapped), !Task.isCancelled else { throw mapped }
                lastError = mapped
            }
        }
        throw lastError
    }

    /// `addresses` with the ones a client is already connected to first, so a name that
    /// resolves to rotating addresses (a CDN, an object store) keeps reusing its connections.
    private func preferredOrder(_ addresses: [IPAddress], host: String, port: Int) -> [IPAddress] {
        let known = lock.withLock { pool.addresses(host: host, port: port) }
        return addresses.filter(known.contains) + addresses.filter { !known.contains($0) }
    }

    private func lease(host: String, port: Int, address: IPAddress) -> ClientPool.Lease {
        let (lease, evicted) = lock.withLock { () -> (ClientPool.Lease, [HTTPClient]) in
            let lease = pool.lease(host: host, port: port, address: address) {
                var configuration = HTTPClient.Configuration(
                    redirectConfiguration: .disallow,
                    timeout: .init(connect: .seconds(10), read: .seconds(Int64(max(1, self.configuration.timeout)))))
                configuration.dnsOverride = [host: address.description]
                configuration.httpVersion = .http1Only
                return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            }
            return (lease, pool.evictIdle(keeping: Self.idleClientLimit))
        }
        // Idle clients only: a client with a download in flight is never shut down.
        for client in evicted { client.shutdown { _ in } }
        return lease
    }

    private func release(_ lease: ClientPool.Lease) {
        let evicted = lock.withLock { () -> [HTTPClient] in
            pool.release(lease)
            return pool.evictIdle(keeping: Self.idleClientLimit)
        }
        for client in evicted { client.shutdown { _ in } }
    }

    /// Clients kept while idle, beyond those in use.
    var idleClientCount: Int { lock.withLock { pool.idleCount } }

    // MARK: Errors

    /// True when no connection was made at all, so another address may be tried.
    private static func isConnectFailure(_ error: any Error, _ mapped: DataLoadingError) -> Bool {
        if case .cannotConnect = mapped { return true }
        if let error = error as? HTTPClientError, error == .connectTimeout { return true }
        return false
    }

    private static func map(_ error: any Error) -> DataLoadingError {
        if error is CancellationError { return .cancelled }
        if let error = error as? DataLoadingError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return .cancelled
            case .connectTimeout, .readTimeout, .deadlineExceeded, .tlsHandshakeTimeout: return .timedOut
            case .remoteConnectionClosed: return .connectionLost
            default: return .other(code: 0)
            }
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return .cannotConnect(.refused)
            case ENETUNREACH, EHOSTUNREACH: return .cannotConnect(.unreachable)
            case ECONNRESET, EPIPE: return .connectionLost
            default: return .other(code: Int(error.errnoCode))
            }
        }
        if let error = error as? NIOConnectionError {
            return error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
                ? .cannotConnect(.refused) : .cannotConnect(.unreachable)
        }
        if error is ChannelError { return .connectionLost }
        return .other(code: 0)
    }
}

/// What a body has received since it began, for the minimum-rate check on a timer.
final class TransferMeter: Sendable {
    /// How often the rate is judged.
    static let checkInterval: Duration = .milliseconds(250)
    private let state = Mutex<(started: ContinuousClock.Instant?, bytes: Int)>((nil, 0))

    /// The response's body begins (after a redirect, the next one's).
    func bodyStarted() { state.withLock { $0 = (.now, 0) } }

    /// `count` more body bytes arrived.
    func received(_ count: Int) { state.withLock { $0.bytes += count } }

    /// True once `grace` has passed since the body began and it has averaged under `rate`
    /// bytes a second.
    func isSlower(than rate: Int, after grace: Duration) -> Bool {
        state.withLock { state in
            guard let started = state.started else { return false }
            let elapsed = ContinuousClock.now - started
            return elapsed > grace && Double(state.bytes) < Double(rate) * elapsed.milliseconds / 1000
        }
    }
}

/// HTTP clients by (host, port, address): each keeps its connections alive for reuse. A client
/// counts its downloads in flight; only idle ones are evicted, least recently used first, so
/// making room never cancels a download (AsyncHTTPClient's shutdown fails what runs on it).
struct ClientPool {
    struct Lease {
        let key: String
        let client: HTTPClient
    }

    private struct Entry {
        let client: HTTPClient
        let host: String
        let address: IPAddress
        var inFlight = 0
        var lastUsed: UInt64 = 0
    }

    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0

    var all: [HTTPClient] { entries.values.map(\.client) }

    var idleCount: Int { entries.values.count { $0.inFlight == 0 } }

    /// Addresses of `host:port` that have a client.
    func addresses(host: String, port: Int) -> Set<IPAddress> {
        Set(entries.values.filter { $0.host == "\(host):\(port)" }.map(\.address))
    }

    mutating func lease(host: String, port: Int, address: IPAddress, make: () -> HTTPClient) -> Lease {
        let key = "\(host):\(port)|\(address)"
        clock += 1
        var entry = entries[key] ?? Entry(client: make(), host: "\(host):\(port)", address: address)
        entry.inFlight += 1
        entry.lastUsed = clock
        entries[key] = entry
        return Lease(key: key, client: entry.client)
    }

    mutating func release(_ lease: Lease) {
        entries[lease.key]?.inFlight -= 1
    }

    /// Removes idle clients beyond `limit`, least recently used first; returns them to shut down.
    mutating func evictIdle(keeping limit: Int) -> [HTTPClient] {
        let idle = entries.filter { $0.value.inFlight == 0 }.sorted { $0.value.lastUsed < $1.value.lastUsed }
        guard idle.count > limit else { return [] }
        return idle.prefix(idle.count - limit).compactMap { entries.removeValue(forKey: $0.key)?.client }
    }
}

extension Result where Failure == DataLoadingError {
    /// `Result(catching:)` for an async body.
    static func capturing(_ body: () async throws(DataLoadingError) -> Success) async -> Result {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}
