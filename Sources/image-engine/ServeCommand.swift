import URLSigning
import ArgumentParser
import Foundation
import ImageCodec
import ImageService
import Logging
import Metrics
import NIOCore
import Prometheus

/// `image-engine serve`: the HTTP thumbnail service (imgproxy's URLs and signatures).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve thumbnails over HTTP from signed imgproxy-style URLs.",
        discussion: """
            URLs: /SIGNATURE/OPTIONS/plain/PERCENT-ENCODED-SOURCE[@EXT] or \
            /SIGNATURE/OPTIONS/BASE64URL-SOURCE[.EXT], signed with HMAC-SHA256 over salt + path \
            (see 'image-engine sign'). Keys come from IMAGE_ENGINE_KEY and IMAGE_ENGINE_SALT (hex; \
            comma-separated pairs rotate keys); without them serve refuses to start unless --unsafe. \
            GET /health is 200 while the process runs; GET /ready is 503 while a queue is full, the \
            memory budget is nearly full, or the server drains. Every flag, its default and what it \
            protects: the "Configuring the service" article. SIGTERM or SIGINT drains: in-flight requests finish within \
            --shutdown-timeout, then the exit status is 0. One log line per request on stdout. Exit \
            status 1 when an address cannot be bound or the cache cannot be opened, 64 for a usage mistake.

            Examples:
              export IMAGE_ENGINE_KEY=$(openssl rand -hex 32)
              export IMAGE_ENGINE_SALT=$(openssl rand -hex 16)
              image-engine serve --cache-dir /var/cache/img --metrics-bind 127.0.0.1:9090
              image-engine serve --allowed-source https://images.example.com/
            """
    )

    @Option(name: .long, help: ArgumentHelp("Address to listen on.", valueName: "host:port"))
    var bind: String = "127.0.0.1:8080"

    @Option(name: .long, help: ArgumentHelp("Directory for the source and result disk caches; without it they stay in memory.", valueName: "dir"))
    var cacheDir: String?

    @Option(name: .long, help: ArgumentHelp("Disk the caches may use: bytes or 2GB, 2GiB (3/4 sources, 1/4 results).", valueName: "size"))
    var cacheSize: ByteCount = ByteCount(bytes: 1 << 30)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Memory for finished thumbnails and recently fetched sources, half each (behind nginx or a CDN, more buys little): bytes or 8MB, 8MiB.",
            valueName: "size"))
    var memoryCache: ByteCount = ByteCount(bytes: ThumbnailService.Configuration.defaultMemoryCache)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Times a thumbnail or source is made before the memory caches keep it, 1-255 (2: a URL's first request, "
                + "the only one behind a CDN, holds no memory).",
            valueName: "n"))
    var memoryCacheMinUses = 2

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "Only fetch sources with this scheme, host and port, under this path at a / boundary (repeatable): https://host[:port][/path].",
            valueName: "url"))
    var allowedSource: [String] = []

    @Flag(name: .long, help: "Allow sources on loopback, private and other non-public addresses (not link-local ones).")
    var allowPrivateSources = false

    @Flag(name: .long, help: "Allow sources on link-local addresses, cloud metadata endpoints included (169.254.0.0/16, fe80::/10).")
    var allowLinkLocalSources = false

    @Flag(name: .long, help: "Accept unsigned URLs (the signature segment is ignored). Never on a public network.")
    var unsafe = false

    @Option(name: .long, help: ArgumentHelp("Decodes + encodes at once (default: one per core).", valueName: "n"))
    var workers: Int?

    @Option(name: .long, help: ArgumentHelp("Requests that may wait for a worker before 429 (default: 32 per worker).", valueName: "n"))
    var queue: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Memory requests may hold at once — source bytes downloading or waiting for a worker, and the decodes' planned memory; beyond it, 429: bytes or 512MB, 512MiB.",
            valueName: "size"))
    var maxMemory: ByteCount = ByteCount(bytes: 512 << 20)

    @Option(name: .long, help: ArgumentHelp("Source downloads in flight at once.", valueName: "n"))
    var maxDownloads: Int = 64

    @Option(name: .long, help: ArgumentHelp("Source downloads in flight from one host at once.", valueName: "n"))
    var maxDownloadsPerHost: Int = 8

    @Option(name: .long, help: ArgumentHelp("Downloads that may wait beyond those before 429.", valueName: "n"))
    var downloadQueue: Int = 256

    @Option(
        name: .long,
        help: ArgumentHelp("Bytes a second a source body must average after its first 2 s (504 below): ends trickles.", valueName: "size"))
    var minDownloadRate: ByteCount = ByteCount(bytes: 16 << 10)

    @Option(name: .long, help: ArgumentHelp("Largest source body, enforced while downloading.", valueName: "size"))
    var maxSrcBytes: ByteCount = ByteCount(bytes: 64 << 20)

    @Option(name: .long, help: ArgumentHelp("Largest source width × height, checked from its header.", valueName: "n"))
    var maxSrcPixels: Int = 100_000_000

    @Option(name: .long, help: ArgumentHelp("Seconds a source download may take, redirects included.", valueName: "seconds"))
    var downloadTimeout: Double = 10

    @Option(name: .long, help: ArgumentHelp("Cache-Control max-age of results, in seconds.", valueName: "seconds"))
    var ttl: Int = 31_536_000

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics.", valueName: "host:port"))
    var metricsBind: String?

    @Option(name: .long, help: ArgumentHelp("Seconds in-flight requests get to finish after SIGTERM.", valueName: "seconds"))
    var shutdownTimeout: Double = 10

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Client connections open at once. As the last is taken, the one that has waited longest for a request is closed; "
                + "when every connection has a request in progress, more wait to be accepted.", valueName: "n"))
    var maxConnections: Int = 2048

    @Option(name: .long, help: ArgumentHelp("Seconds an idle keep-alive connection stays open.", valueName: "seconds"))
    var keepAliveTimeout: Double = 10

    @Option(
        name: .long,
        help: ArgumentHelp("Seconds a request may take from arrival to answer (504 beyond), whatever it waits for.", valueName: "seconds"))
    var requestTimeout: Double = 10

    @Option(
        name: .long,
        help: ArgumentHelp("Seconds a request may take to arrive, from its head to its end, however it trickles.", valueName: "seconds"))
    var requestReadTimeout: Double = 10

    @Option(
        name: .long, help: ArgumentHelp("Seconds an answer may take to be written to a client that reads slowly.", valueName: "seconds"))
    var responseWriteTimeout: Double = 30

    @Flag(
        name: .long,
        help:
            "JPEG and WebP sources: decode at the smallest scale that still covers the output, as imgproxy and thumbor do (faster, slightly softer; part of every cache key and ETag)."
    )
    var fastShrinkOnLoad = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "JPEG encoder: perceptual (fewer bytes for the same look) or libjpeg-turbo (the bytes of earlier releases; part of every cache key and ETag).",
            valueName: "perceptual|libjpeg-turbo"))
    var jpegEncoder: JPEGEncodingOptions.Encoder = .perceptual

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Most frames of an animated GIF or WebP answered as WebP: 1 (the default, as imgproxy's) answers its first frame, still; N > 1 an animated WebP of the first N frames. The frames kept count against --max-src-pixels.",
            valueName: "n"))
    var maxAnimationFrames = 1

    @Flag(
        name: .long,
        help: "A URL without a format gets WebP when the request's Accept names image/webp (JPEG or PNG otherwise); such answers carry Vary: Accept.")
    var autoWebp = false

    @Flag(
        name: .long,
        help:
            "A URL without a format gets AVIF when the request's Accept names image/avif (preferred over WebP with --auto-webp); such answers carry Vary: Accept."
    )
    var autoAvif = false

    @Flag(name: .long, help: "Log JSON lines (time, level, message, method, path, status, bytes, ms, cache).")
    var jsonLog = false

    func validate() throws {
        guard ServerAddress(parsing: bind) != nil else { throw ValidationError("--bind must be HOST:PORT, got '\(bind)'") }
        if let metricsBind, ServerAddress(parsing: metricsBind) == nil {
            throw ValidationError("--metrics-bind must be HOST:PORT, got '\(metricsBind)'")
        }
        if let workers, workers < 1 { throw ValidationError("--workers must be at least 1, got \(workers)") }
        if let queue, queue < 0 { throw ValidationError("--queue must be 0 or more, got \(queue)") }
        if !(1...255).contains(memoryCacheMinUses) {
            throw ValidationError("--memory-cache-min-uses must be 1 to 255, got \(memoryCacheMinUses)")
        }
        if !(1...1024).contains(maxAnimationFrames) {
            throw ValidationError("--max-animation-frames must be 1 to 1024, got \(maxAnimationFrames)")
        }
        if maxDownloads < 1 { throw ValidationError("--max-downloads must be at least 1, got \(maxDownloads)") }
        if maxDownloadsPerHost < 1 { throw ValidationError("--max-downloads-per-host must be at least 1, got \(maxDownloadsPerHost)") }
        if downloadQueue < 0 { throw ValidationError("--download-queue must be 0 or more, got \(downloadQueue)") }
        if maxSrcPixels < 1 { throw ValidationError("--max-src-pixels must be at least 1, got \(maxSrcPixels)") }
        try Self.checkSeconds(downloadTimeout, "--download-timeout")
        // RFC 9111 §1.2.2: caches read a larger max-age as 2^31 seconds anyway.
        if ttl < 0 || ttl > 2_147_483_648 { throw ValidationError("--ttl must be 0 to 2147483648 seconds, got \(ttl)") }
        try Self.checkSeconds(shutdownTimeout, "--shutdown-timeout", allowsZero: true)
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1, got \(maxConnections)") }
        try Self.checkSeconds(keepAliveTimeout, "--keep-alive-timeout")
        try Self.checkSeconds(requestTimeout, "--request-timeout")
        try Self.checkSeconds(requestReadTimeout, "--request-read-timeout")
        try Self.checkSeconds(responseWriteTimeout, "--response-write-timeout")
        for source in allowedSource where AllowedSource(source) == nil {
            throw ValidationError("--allowed-source must be http(s)://host[:port][/path] without credentials, query or dot segments, got '\(source)'")
        }
        _ = try Self.keys(unsafe: unsafe)
        _ = try Self.signatureSize()
    }

    /// A duration flag: a number of seconds above 0 (or 0 itself where `allowsZero`), at most an
    /// hour, so that every conversion to a clock's units stays in range.
    static func checkSeconds(_ value: Double, _ flag: String, allowsZero: Bool = false) throws {
        guard value.isFinite, allowsZero ? value >= 0 : value > 0, value <= 3600 else {
            throw ValidationError("\(flag) must be \(allowsZero ? "0" : "more than 0") to 3600 seconds, got \(value)")
        }
    }

    /// `IMAGE_ENGINE_SIGNATURE_SIZE`: bytes of HMAC a signature carries, 1-32 (32 when unset);
    /// a usage error otherwise.
    static func signatureSize() throws -> Int {
        guard let text = ProcessInfo.processInfo.environment["IMAGE_ENGINE_SIGNATURE_SIZE"], !text.isEmpty else { return 32 }
        guard let size = Int(text), URLSigner.signatureSizes.contains(size) else {
            throw ValidationError("IMAGE_ENGINE_SIGNATURE_SIZE must be a number of bytes from 1 to 32, got '\(text)'")
        }
        return size
    }

    /// The key pairs from the environment; a usage error when they are missing (and --unsafe
    /// is not given) or malformed.
    static func keys(unsafe: Bool) throws -> [SigningKey] {
        let environment = ProcessInfo.processInfo.environment
        guard let keys = SigningKey.pairs(keys: environment["IMAGE_ENGINE_KEY"], salts: environment["IMAGE_ENGINE_SALT"]) else {
            throw ValidationError("IMAGE_ENGINE_KEY and IMAGE_ENGINE_SALT must be non-empty hex, as many keys as salts, comma-separated")
        }
        if keys.isEmpty && !unsafe {
            throw ValidationError("no signing key: set IMAGE_ENGINE_KEY and IMAGE_ENGINE_SALT (hex), or pass --unsafe to accept unsigned URLs")
        }
        return keys
    }

    func run() async throws {
        let keys = try Self.keys(unsafe: unsafe)
        // A descriptor per connection and per download, and some for the metrics listener, the
        // caches' files and the process itself.
        let descriptors = maxConnections + maxDownloads + 128
        let limit = FileDescriptorLimit.raise(toAtLeast: descriptors)
        guard limit.soft >= descriptors else {
            throw Output.failure(
                "cannot start: --max-connections \(maxConnections) and --max-downloads \(maxDownloads) need \(descriptors) open files, "
                    + "and the limit is \(limit.hard) (raise LimitNOFILE or ulimit -n, or lower them)")
        }
        let address = ServerAddress(parsing: bind)!
        let metricsAddress = metricsBind.flatMap(ServerAddress.init(parsing:))
        let jsonLog = jsonLog
        LoggingSystem.bootstrap { label -> any LogHandler in jsonLog ? JSONLogHandler(label: label) : LineLogHandler(label: label) }
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        MetricsSystem.bootstrap(factory)

        let workers = workers ?? ProcessInfo.processInfo.activeProcessorCount
        var configuration = ThumbnailService.Configuration(
            keys: keys, requiresSignature: !unsafe,
            sourcePolicy: SourcePolicy(
                allowedSources: allowedSource.compactMap(AllowedSource.init), allowsPrivateAddresses: allowPrivateSources,
                allowsLinkLocalAddresses: allowLinkLocalSources),
            workers: workers, queueLimit: queue, memoryBudget: maxMemory.bytes, maxSourceBytes: maxSrcBytes.bytes,
            maxSourcePixels: maxSrcPixels, downloadTimeout: downloadTimeout, timeToLive: ttl,
            cacheDirectory: cacheDir.map { URL(fileURLWithPath: $0, isDirectory: true) }, cacheSize: cacheSize.bytes,
            resultMemoryLimit: memoryCache.bytes / 2, sourceMemoryLimit: memoryCache.bytes - memoryCache.bytes / 2)
        configuration.memoryCacheMinimumUses = memoryCacheMinUses
        configuration.signatureSize = try Self.signatureSize()
        // imgproxy's range is kept (URLs must keep working), but a short signature is said out
        // loud: each byte less is 256 times fewer guesses to forge a URL.
        if configuration.signatureSize < 8, !unsafe {
            Output.error(
                "warning: IMAGE_ENGINE_SIGNATURE_SIZE=\(configuration.signatureSize): a signature of \(configuration.signatureSize) byte(s) "
                    + "is forged in about 2^\(8 * configuration.signatureSize - 1) tries; use 8 or more")
        }
        configuration.maximumConcurrentDownloads = maxDownloads
        configuration.maximumDownloadsPerHost = maxDownloadsPerHost
        configuration.downloadQueueLimit = downloadQueue
        configuration.minimumDownloadRate = minDownloadRate.bytes
        configuration.fastShrinkOnLoad = fastShrinkOnLoad
        configuration.jpegEncoder = jpegEncoder
        configuration.maxAnimationFrames = maxAnimationFrames
        configuration.autoWebP = autoWebp
        configuration.autoAVIF = autoAvif
        configuration.requestTimeout = requestTimeout
        let service = try Output.failing { () throws(DiskCacheOpeningError) in
            do {
                return try ThumbnailService(configuration: configuration, logger: Logger(label: "image-engine"), metricsFactory: factory)
            } catch {
                throw DiskCacheOpeningError(description: "cannot open the cache in \(cacheDir ?? "."): \(error)")
            }
        }
        let server = ThumbnailServer(
            service: service,
            configuration: .init(
                address: address, metricsAddress: metricsAddress,
                shutdownTimeout: .milliseconds(Int64(shutdownTimeout * 1000)),
                idleTimeout: .milliseconds(Int64(keepAliveTimeout * 1000)), maximumConnections: maxConnections,
                requestReadTimeout: .milliseconds(Int64(requestReadTimeout * 1000)),
                responseWriteTimeout: .milliseconds(Int64(responseWriteTimeout * 1000))),
            registry: registry)
        let unsafe = unsafe
        do {
            try await server.run(
                onListening: { port in
                    Output.error(
                        "listening on http://\(ServerAddress(host: address.host, port: port))\(unsafe ? " (unsafe: signatures are not checked)" : "")"
                    )
                },
                onMetricsListening: { port in
                    if let metricsAddress { Output.error("metrics on http://\(ServerAddress(host: metricsAddress.host, port: port))/metrics") }
                })
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw Output.failure("cannot listen: the port is in use (\(bind)\(metricsBind.map { " or " + $0 } ?? ""))")
        } catch {
            throw Output.failure("cannot serve: \(error)")
        }
        // The log lines of the last requests are still queued for the log's own thread.
        LogOutput.flush()
        Output.error("stopped")
    }
}

/// A cache directory that could not be opened, as one line.
private struct DiskCacheOpeningError: Error, CustomStringConvertible {
    let description: String
}
