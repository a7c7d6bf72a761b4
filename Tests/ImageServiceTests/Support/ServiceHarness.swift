import AsyncHTTPClient
import Foundation
import ImageCodec
import ImagePipeline
import ImageServer
@testable import ImageService
import Logging
import NIOCore
import NIOHTTP1
import Prometheus
import TestSupport

/// A real service on a loopback port with the test image server as its origin: what every
/// HTTP test talks to. The origin's `127.0.0.1:PORT` is a trusted endpoint (the only private
/// address the service may fetch from), so the refused-address rules apply to everything else.
final class ServiceHarness: Sendable {
    /// imgproxy's documentation key pair (`secret` / `hello`).
    static let documentationKey = SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!

    let origin: ImageServer
    let service: ThumbnailService
    let server: ThumbnailServer
    let port: Int
    let metricsPort: Int
    let client: HTTPClient
    let logLines: LogLines
    private let runner: Task<Void, any Error>
    let cacheDirectory: TemporaryDirectory?

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data

        func header(_ name: String) -> String? { headers.first(name: name) }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Starts the origin (serving the small photos at `/NAME`), a service configured by
    /// `configure`, and its server.
    /// `gate`, when given, holds every render in its worker slot until it opens.
    /// `resolver`, when given, answers the source fetcher's DNS lookups.
    static func start(
        diskCache: Bool = false, gate: Gate? = nil, resolver: (any AddressResolving)? = nil,
        configure: (inout ThumbnailService.Configuration) -> Void = { _ in },
        server configureServer: (inout ThumbnailServer.Configuration) -> Void = { _ in }
    ) async throws -> ServiceHarness {
        let origin = try await ImageServer.start()
        for name in SmallPhotos.names {
            origin.serve(
                "/\(name)",
                ImageServer.Resource(
                    data: try SmallPhotos.data(name), contentType: name.hasSuffix(".png") ? "image/png" : "image/jpeg",
                    lastModified: Date(timeIntervalSince1970: 1_700_000_000)))
        }
        let directory = diskCache ? try TemporaryDirectory() : nil
        var configuration = ThumbnailService.Configuration(
            keys: [documentationKey],
            sourcePolicy: SourcePolicy(trustedEndpoints: ["127.0.0.1:\(origin.port)"]), workers: 2)
        configuration.cacheDirectory = directory?.url
        // The client's own timeout: tests that hold requests on purpose (gates, tarpits) are not
        // cut by the 10 s default; the deadline's own tests set theirs.
        configuration.requestTimeout = 60
        // Most tests check what the caches do with an entry once they hold one, from its first
        // request; admission on the second (the service's default) has its own tests, which set it.
        configuration.memoryCacheMinimumUses = 1
        configure(&configuration)
        let registry = PrometheusCollectorRegistry()
        let logLines = LogLines()
        let logger = Logger(label: "test") { _ in JSONLogHandler(label: "test") { logLines.append($0) } }
        var whileAdmitted: (@Sendable () async -> Void)?
        if let gate { whileAdmitted = { await gate.pass() } }
        let service = try ThumbnailService(
            configuration: configuration, logger: logger, metricsFactory: PrometheusMetricsFactory(registry: registry),
            whileAdmitted: whileAdmitted, resolver: resolver)
        var serverConfiguration = ThumbnailServer.Configuration(
            address: ServerAddress(host: "127.0.0.1", port: 0), metricsAddress: ServerAddress(host: "127.0.0.1", port: 0),
            shutdownTimeout: .seconds(10), shutdownSignals: [])
        configureServer(&serverConfiguration)
        let server = ThumbnailServer(service: service, configuration: serverConfiguration, registry: registry)
        let (ports, continuation) = AsyncStream<(String, Int)>.makeStream()
        let runner = Task {
            try await server.run(onListening: { continuation.yield(("service", $0)) }, onMetricsListening: { continuation.yield(("metrics", $0)) })
        }
        var found: [String: Int] = [:]
        for await (name, port) in ports {
            found[name] = port
            if found.count == 2 { break }
        }
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(60)))
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        return ServiceHarness(
            origin: origin, service: service, server: server, port: found["service"] ?? 0, metricsPort: found["metrics"] ?? 0,
            client: client, logLines: logLines, runner: runner, cacheDirectory: directory)
    }

    private init(
        origin: ImageServer, service: ThumbnailService, server: ThumbnailServer, port: Int, metricsPort: Int, client: HTTPClient,
        logLines: LogLines, runner: Task<Void, any Error>, cacheDirectory: TemporaryDirectory?
    ) {
        self.origin = origin
        self.service = service
        self.server = server
        self.port = port
        self.metricsPort = metricsPort
        self.client = client
        self.logLines = logLines
        self.runner = runner
        self.cacheDirectory = cacheDirectory
    }

    /// The origin's URL for `name`.
    func source(_ name: String) -> String { origin.url(name).absoluteString }

    /// A path signed with the documentation key.
    func path(_ options: String, _ source: String, ext: String? = nil, plain: Bool = false) -> String {
        URLSigner(keys: [Self.documentationKey]).signedPath(options: options, source: source, extension: ext, plain: plain)!
    }

    /// Sends a request to the service (or to `/metrics` with `metrics`).
    func get(_ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = [], metrics: Bool = false) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(metrics ? metricsPort : port)" + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
    }

    /// The image `serve` answers for `options` on the origin's `name`, decoded (as it comes:
    /// `.preserveSource` keeps a written profile); a status other than 200 is an error.
    func image(_ options: String, _ name: String = "kite.jpg", colorManagement: ColorManagement = .convertToSRGB) async throws -> Bitmap {
        let reply = try await get(path(options, source(name)))
        guard reply.status == 200 else { throw HarnessFailure(description: "\(options): status \(reply.status)") }
        return try ImageDecoder(options: DecodingOptions(colorManagement: colorManagement)).decode(reply.body)
    }

    struct HarnessFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// A test that throws before ``stop()`` still fails as one test: AsyncHTTPClient traps on a
    /// client that is dropped running, which would end the whole test process. After `stop()`
    /// the shutdown's `alreadyShutdown` is expected, so it is ignored.
    deinit {
        try? client.syncShutdown()
        runner.cancel()
    }

    /// Stops the server (gracefully), the client and the origin.
    func stop() async {
        await server.shutDown()
        _ = await runner.result
        try? await client.shutdown()
        await origin.stop()
    }
}

/// Log lines the service wrote, as JSON objects.
final class LogLines: @unchecked Sendable {
    // @unchecked: `lines` is only touched while `lock` is held.
    private let lock = NSLock()
    private var lines: [Data] = []

    func append(_ line: Data) { lock.withLock { lines.append(line) } }

    var records: [[String: Any]] {
        lock.withLock { lines }.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}

extension ServiceHarness {
    /// The Prometheus samples `/metrics` answers now, by series (`name{labels}`).
    func metricSamples() async throws -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in try await get("/metrics", metrics: true).text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(String(parts[1])) else { continue }
            samples[String(parts[0])] = value
        }
        return samples
    }
}

/// DNS for tests: every name ending in `.test` is the test origin's 127.0.0.1, so sources can
/// come from many hosts on one loopback server; `never.test` never answers (until cancelled).
struct TestResolver: AddressResolving {
    func addresses(of host: String) async throws(DataLoadingError) -> [IPAddress] {
        if host == "never.test" {
            do { try await Task.sleep(for: .seconds(3600)) } catch { throw .cancelled }
        }
        return host.hasSuffix(".test") ? [.v4(0x7F00_0001)] : []
    }
}
