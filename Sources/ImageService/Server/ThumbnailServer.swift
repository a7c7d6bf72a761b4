import Foundation
import Hummingbird
import HummingbirdCore
import Locking
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `ThumbnailService` on HTTP/1.1 (Hummingbird on SwiftNIO), with `/metrics` on a separate
/// listener and a graceful shutdown: on SIGTERM or SIGINT (or `shutDown()`) the service starts
/// draining at once (`/ready` 503, new image requests 503), the listener closes, requests in
/// flight finish within `shutdownTimeout` (then they are cancelled), queued disk writes land,
/// and `run` returns.
///
/// ```swift
/// let server = ThumbnailServer(service: service, configuration: .init(address: ServerAddress(host: "127.0.0.1", port: 8080)))
/// try await server.run()
/// ```
public final class ThumbnailServer: Sendable {
    /// Where to listen and how to stop.
    public struct Configuration: Sendable {
        /// The service's address.
        public var address: ServerAddress
        /// Where `/metrics` (Prometheus text) is served; nil serves none.
        public var metricsAddress: ServerAddress?
        /// How long requests in flight may take to finish once shutdown begins.
        public var shutdownTimeout: Duration
        /// Idle keep-alive connections are closed after this long (`--keep-alive-timeout`).
        public var idleTimeout: Duration
        /// Client connections open at once (`--max-connections`). As the last is taken, the one
        /// that has waited longest for a request is closed; when every connection has a request
        /// in progress, new ones wait in the listen backlog until one closes.
        public var maximumConnections: Int
        /// How long a request may take to arrive, from its head to its end, however slowly it
        /// trickles (`--request-read-timeout`); its head has the idle timeout to arrive first.
        public var requestReadTimeout: Duration
        /// How long an answer may take to be written to a client that reads slowly or not at
        /// all (`--response-write-timeout`).
        public var responseWriteTimeout: Duration
        /// Signals that begin a graceful shutdown (none in tests that stop the server themselves).
        public var shutdownSignals: [UnixSignal]

        /// A configuration; by default no metrics listener, 10 s to drain, SIGTERM and SIGINT.
        public init(
            address: ServerAddress, metricsAddress: ServerAddress? = nil, shutdownTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(10), maximumConnections: Int = 2048, requestReadTimeout: Duration = .seconds(10),
            responseWriteTimeout: Duration = .seconds(30), shutdownSignals: [UnixSignal] = [.sigterm, .sigint]
        ) {
            self.requestReadTimeout = requestReadTimeout
            self.responseWriteTimeout = responseWriteTimeout
            self.address = address
            self.metricsAddress = metricsAddress
            self.shutdownTimeout = shutdownTimeout
            self.idleTimeout = idleTimeout
            self.maximumConnections = maximumConnections
            self.shutdownSignals = shutdownSignals
        }
    }

    /// The service behind the server.
    public let service: ThumbnailService
    /// The configuration the server was made with.
    public let configuration: Configuration
    private let registry: PrometheusCollectorRegistry?
    private let logger: Logger
    private let lock = Lock()
    private nonisolated(unsafe) var group: ServiceGroup?
    private nonisolated(unsafe) var shutDownEarly = false

    /// A server for `service`; `registry` is what `/metrics` emits (the registry behind the
    /// service's metrics factory). `logger` gets the server's own messages (not the request
    /// log, which is the service's).
    public init(
        service: ThumbnailService, configuration: Configuration, registry: PrometheusCollectorRegistry? = nil,
        logger: Logger = Logger(label: "image-engine.server")
    ) {
        self.service = service
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
    }

    /// Listens until shut down. `onListening` gets the bound port of the service (useful with
    /// port 0), `onMetricsListening` that of `/metrics`. Throws when an address cannot be bound
    /// (`IOError` with `EADDRINUSE` when the port is taken).
    public func run(
        onListening: @escaping @Sendable (Int) -> Void = { _ in }, onMetricsListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws {
        var quiet = logger
        // Hummingbird's own messages ("server started"...) only when something is wrong.
        quiet.logLevel = max(logger.logLevel, .warning)
        let limits = Self.deadlines(configuration)
        var services: [any Service] = []
        if let metricsAddress = configuration.metricsAddress {
            let registry = registry ?? PrometheusCollectorRegistry()
            let router = Router()
            router.get("metrics") { [service] _, _ -> Response in
                service.updateCacheMetrics()
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))) // small: the metrics text
            }
            // Scrapers are few: a small cap, and the same timeouts as the service's listener, so
            // idle or trickling connections to /metrics cannot use up the process's files.
            let metricsShedder = ConnectionShedder(maximum: Self.maximumMetricsConnections)
            let metricsHTTP = HTTP1Channel.Configuration(
                additionalChannelHandlers: [ConnectionDeadlines(limits: limits, shedder: metricsShedder)], idleTimeout: nil)
            services.append(
                Application(
                    router: router, server: .http1(configuration: metricsHTTP),
                    configuration: ApplicationConfiguration(
                        address: .hostname(metricsAddress.host, port: metricsAddress.port),
                        availableConnectionsDelegate: MaximumAvailableConnections(Self.maximumMetricsConnections)),
                    onServerRunning: { onMetricsListening($0.localAddress?.port ?? 0) }, logger: quiet))
        }
        // Shut down in reverse order: drain first, then the service's listener and its
        // requests, and the metrics listener last, so the drain can be watched.
        services += Self.services(serving: service, configuration: configuration, logger: quiet, onListening: onListening)
        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: configuration.shutdownSignals, logger: quiet)
        groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownTimeout
        let group = ServiceGroup(configuration: groupConfiguration)
        let stopAtOnce = lock.withLock { () -> Bool in
            self.group = group
            return shutDownEarly
        }
        if stopAtOnce { await group.triggerGracefulShutdown() }
        defer { lock.withLock { self.group = nil } }
        try await group.run()
        await service.flush()
    }

    /// What `run()` serves `service` with, for a server of your own: the Hummingbird
    /// application on `configuration.address`, and the service that starts the drain when a
    /// graceful shutdown begins, in the order a `ServiceGroup` should hold them (it shuts
    /// down in reverse: the drain first, then the listener and its requests). Add them to your
    /// group beside your own services; `/metrics` is yours to serve (`run()` adds a listener).
    ///
    /// The application carries every guard `run()` has:
    /// - a request whose client goes away is cancelled and logged as 499, its render stopped
    ///   (the disconnect watcher);
    /// - `requestReadTimeout` for a request's head, `responseWriteTimeout` for writing an
    ///   answer, `idleTimeout` between requests, each its own timer (the connection deadlines);
    /// - past `maximumConnections`, the longest-idle or stalled connection is closed to let a
    ///   new one in, and accepting pauses when none can go (the shedder);
    /// - heads of at most 100 fields and 32 KiB, and a GET or HEAD with a body refused (400,
    ///   connection closed): requests are a signed path and a few headers.
    ///
    /// ```swift
    /// let services = ThumbnailServer.services(serving: service, configuration: ThumbnailServer.Configuration(
    ///     address: ServerAddress(host: "127.0.0.1", port: 8080)))
    /// try await ServiceGroup(services: services + myServices, logger: logger).run()
    /// ```
    public static func services(
        serving service: ThumbnailService, configuration: Configuration, logger: Logger = Logger(label: "image-engine.server"),
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> [any Service] {
        // Request heads are small (a signed path, a few headers): 16 KiB a field, 32 KiB in all,
        // 100 fields, where NIO would allow 80 KiB and 1,000.
        let shedder = ConnectionShedder(maximum: configuration.maximumConnections)
        // No idle timeout of Hummingbird's: ConnectionDeadlines keeps every timer, and
        // Hummingbird's starts once an answer's end is handed over, before it is written.
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [DisconnectWatcher(), ConnectionDeadlines(limits: deadlines(configuration), shedder: shedder)],
            idleTimeout: nil,
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 << 10, maxHeaderListSize: 32 << 10, maxHeaderFieldCount: 100))
        let app = Application(
            responder: ServiceResponder(service: service), server: .http1(configuration: http),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.address.host, port: configuration.address.port),
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections)),
            onServerRunning: { onListening($0.localAddress?.port ?? 0) }, logger: logger)
        return [app, DrainOnShutdown(service: service)]
    }

    private static func deadlines(_ configuration: Configuration) -> ConnectionDeadlines.Limits {
        ConnectionDeadlines.Limits(
            idle: timeAmount(configuration.idleTimeout), requestRead: timeAmount(configuration.requestReadTimeout),
            responseWrite: timeAmount(configuration.responseWriteTimeout))
    }

    /// Connections to the metrics listener at once.
    static let maximumMetricsConnections = 16

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        TimeAmount.nanoseconds(Int64(duration.milliseconds * 1e6))
    }

    /// Begins a graceful shutdown, as SIGTERM does.
    public func shutDown() async {
        let group = lock.withLock { () -> ServiceGroup? in
            shutDownEarly = true
            return self.group
        }
        await group?.triggerGracefulShutdown()
    }
}
