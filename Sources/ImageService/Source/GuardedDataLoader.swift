import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImagePipeline
import Locking
import NIOCore
import NIOHTTP1
import NIOPosix

/// The service's `DataLoading`: fetches a source only from addresses its `SourcePolicy`
/// allows, checking the address it will actually connect to — after DNS, and again after
/// every redirect (followed here, at most `maximumRedirects`, never by the HTTP client) — so
/// there is no window between checking a name and connecting to what it resolves to.
///
/// The connection is made with AsyncHTTPClient to the checked address (its `dnsOverride`),
/// keeping the name for `Host` and TLS (SNI and the certificate check). Bodies are counted
/// while they arrive and refused past the limit; the whole transfer has a deadline.
public final class GuardedDataLoader: DataLoading, @unchecked Sendable {
    // @unchecked: `clients` is only touched while `lock` is held.
    /// What a fetch may do.
    public struct Configuration: Sendable {
        /// Which sources and addresses are allowed.
        public var policy: SourcePolicy
        /// Seconds a whole fetch (every redirect included) may take.
        public var timeout: TimeInterval
        /// Redirects followed before giving up.
        public var maximumRedirects: Int

        /// A configuration; by default 10 s and 5 redirects.
        public init(policy: SourcePolicy, timeout: TimeInterval = 10, maximumRedirects: Int = 5) {
            self.policy = policy
            self.timeout = timeout
            self.maximumRedirects = maximumRedirects
        }
    }

    /// The configuration fetches run with.
    public let configuration: Configuration
    private let lock = Lock()
    /// One client per checked (host, address): each keeps its connections alive for reuse,
    /// and a host that starts resolving elsewhere gets a new client for the new address.
    private var clients: [String: HTTPClient] = [:]
    private var clientOrder: [String] = []
    private static let clientLimit = 32

    /// A loader with `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    deinit {
        for client in clients.values { client.shutdown { _ in } }
    }

    public func loadData(
        for request: URLRequest, maximumBodySize: Int,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        guard let url = request.url else { throw .notPermitted(host: "") }
        let timeout = configuration.timeout
        let outcome = await withTaskGroup(of: Result<DataLoadingResponse, DataLoadingError>?.self) { group in
            group.addTask {
                await Result.capturing { () throws(DataLoadingError) in
                    try await self.fetch(request, from: url, limit: maximumBodySize, progress: progress)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return Task.isCancelled ? nil : .failure(.timedOut)
            }
            var first: Result<DataLoadingResponse, DataLoadingError>?
            while first == nil, let next = await group.next() { first = next }
            group.cancelAll()
            return first ?? .failure(.cancelled)
        }
        if Task.isCancelled { throw .cancelled }
        return try outcome.get()
    }

    private func fetch(
        _ original: URLRequest, from start: URL, limit: Int,
        progress: @escaping @Sendable (Int, Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        var url = start
        var redirects = 0
        while true {
            let policy = configuration.policy
            guard policy.refusal(of: url) == nil, let host = url.host else { throw .notPermitted(host: url.host ?? url.absoluteString) }
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            let addresses = await AddressResolver.addresses(of: host)
            guard !addresses.isEmpty else { throw .cannotConnect(.hostNotFound) }
            // Every address the name has must be allowed: a name that mixes a public address
            // with a private one is refused rather than half trusted.
            guard addresses.allSatisfy({ policy.refusal(of: $0, port: port) == nil }), let address = addresses.first else {
                throw .notPermitted(host: host)
            }
            if Task.isCancelled { throw .cancelled }
            var request = HTTPClientRequest(url: url.absoluteString)
            for (name, value) in original.allHTTPHeaderFields ?? [:] { request.headers.replaceOrAdd(name: name, value: value) }
            let response: HTTPClientResponse
            do {
                response = try await client(host: host, address: address).execute(request, deadline: .distantFuture)
            } catch {
                throw Self.map(error)
            }
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
            var data = Data()
            // Appending grows the buffer by doubling; a source kept in the memory cache would
            // hold that slack for as long as it stays there. The announced length (already
            // checked against the limit) sizes it exactly.
            if let announced, announced > 0 { data.reserveCapacity(announced) }
            do {
                for try await chunk in response.body {
                    guard data.count + chunk.readableBytes <= limit else { throw DataLoadingError.bodyTooLarge(limit: limit) }
                    data.append(contentsOf: chunk.readableBytesView)
                    progress(data.count, announced)
                }
            } catch let error as DataLoadingError {
                throw error
            } catch {
                if let announced, data.count < announced { throw .truncatedBody(expected: announced, received: data.count) }
                throw Self.map(error)
            }
            if let announced, data.count < announced, status != 304 { throw .truncatedBody(expected: announced, received: data.count) }
            return DataLoadingResponse(statusCode: status, headers: headers, data: data, url: url)
        }
    }

    /// The client that connects `host` to `address`, made on first use.
    private func client(host: String, address: IPAddress) -> HTTPClient {
        let key = host + "|" + address.description
        let (client, evicted) = lock.withLock { () -> (HTTPClient, HTTPClient?) in
            if let existing = clients[key] { return (existing, nil) }
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(10), read: .seconds(Int64(max(1, self.configuration.timeout)))))
            configuration.dnsOverride = [host: address.description]
            configuration.httpVersion = .http1Only
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            clientOrder.append(key)
            guard clientOrder.count > Self.clientLimit else { return (client, nil) }
            return (client, clients.removeValue(forKey: clientOrder.removeFirst()))
        }
        evicted?.shutdown { _ in }
        return client
    }

    private static func map(_ error: any Error) -> DataLoadingError {
        if error is CancellationError { return .cancelled }
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
