import URLSigning
import CoreMetrics
import Foundation
import NIOCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec
import ImagePipeline
import Logging
import Metrics
import Synchronization

/// The thumbnail service without its sockets: an imgproxy-style request path in, an HTTP
/// response out. `ThumbnailServer` puts it behind Hummingbird; tests can drive it directly.
///
/// A request goes: dot segments (400) → signature (403) → options (400) → expiry (410) → source policy (404) →
/// result cache (memory, then disk: served without touching the source) → source, through the
/// pipeline (its memory and disk caches, coalescing, the guarded fetcher) → `If-None-Match`
/// (304 without decoding) → one coalesced render per identical request: a worker slot with the
/// render's memory reserved (waiting in the queue for both; 429 when it is full), decode at the
/// DCT-scaled size with the crop taken while decoding, encode → result cache.
///
/// ```swift
/// let service = try ThumbnailService(configuration: .init(keys: [key]))
/// let response = await service.respond(to: ServiceRequest(path: signedPath))
/// ```
public final class ThumbnailService: Sendable {
    /// The configuration the service was made with.
    public let configuration: Configuration
    /// Signs and verifies paths with the configured keys.
    public let signer: URLSigner
    let pipeline: ImagePipeline
    let results: ResultCache
    /// The disk caches under `--cache-dir`, by name, for their metrics.
    private let diskCaches: [(String, DiskCache)]
    let admission: CPUAdmission
    /// What requests hold: source bodies and the decodes' planned memory (`--max-memory`).
    let memory: MemoryBudget
    let loader: GuardedDataLoader
    let renders = RenderCoalescer<RenderedImage>()
    /// Fetch + render per identical request (without `If-None-Match`), joined before the source
    /// is touched.
    let flights = RenderCoalescer<Outcome>()
    let metrics: ServiceMetrics
    let logger: Logger
    let limits: DecodingLimits
    let counters = ServiceCounters()
    /// Called while a render holds its worker slot, before decoding: lets a test keep a slot
    /// busy for as long as it needs to, deterministically.
    let whileAdmitted: (@Sendable () async -> Void)?
    private let draining = Atomic<Bool>(false)

    /// A service with `configuration`, logging one line per request to `logger` and recording
    /// metrics with `metricsFactory` (by default the global `MetricsSystem`). Throws when a
    /// cache directory cannot be opened (locked by another process, not writable).
    public convenience init(
        configuration: Configuration, logger: Logger = Logger(label: "image-engine"),
        metricsFactory: (any MetricsFactory)? = nil
    ) throws(DiskCacheError) {
        try self.init(configuration: configuration, logger: logger, metricsFactory: metricsFactory, whileAdmitted: nil)
    }

    init(
        configuration: Configuration, logger: Logger, metricsFactory: (any MetricsFactory)?,
        whileAdmitted: (@Sendable () async -> Void)?, resolver: (any AddressResolving)? = nil
    ) throws(DiskCacheError) {
        self.configuration = configuration
        self.logger = logger
        self.whileAdmitted = whileAdmitted
        signer = URLSigner(keys: configuration.keys, signatureSize: configuration.signatureSize)
        let metrics = ServiceMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.metrics = metrics
        limits = DecodingLimits(maxPixelCount: configuration.maxSourcePixels)

        var sourceDisk: DiskCache?
        var resultDisk: DiskCache?
        if let directory = configuration.cacheDirectory {
            let resultShare = max(1 << 20, configuration.cacheSize / 4)
            sourceDisk = try DiskCache(
                directory: directory.appendingPathComponent("sources"),
                configuration: DiskCacheConfiguration(sizeLimit: max(1 << 20, configuration.cacheSize - resultShare)))
            resultDisk = try DiskCache(
                directory: directory.appendingPathComponent("results"),
                configuration: DiskCacheConfiguration(sizeLimit: resultShare))
        }
        diskCaches = [("sources", sourceDisk), ("results", resultDisk)].compactMap { name, cache in cache.map { (name, $0) } }
        let memory = MemoryBudget(capacity: configuration.memoryBudget) { metrics.memoryInUse.set($0) }
        self.memory = memory
        let loader = GuardedDataLoader(
            configuration: .init(
                policy: configuration.sourcePolicy, timeout: configuration.downloadTimeout,
                maximumDownloads: configuration.maximumConcurrentDownloads, maximumDownloadsPerHost: configuration.maximumDownloadsPerHost,
                downloadQueueLimit: configuration.downloadQueueLimit, minimumTransferRate: configuration.minimumDownloadRate),
            resolver: resolver
                ?? SystemAddressResolver(onChange: { lookups in
                    metrics.dnsLookupsInProgress.set(lookups.running)
                    metrics.dnsLookupsWaiting.set(lookups.waiting)
                }),
            memory: memory, largestSource: configuration.maxSourceBytes,
            onAdmissionChange: { snapshot in
                metrics.downloadsInProgress.set(snapshot.running)
                metrics.downloadQueue.set(snapshot.waiting)
            },
            onDownload: { metrics.recordDownload(bytes: $0.bytes, duration: $0.duration) })
        self.loader = loader
        var sources = ImagePipeline.Configuration(
            dataLoader: loader, strategy: .encodedResponse, memoryCacheLimit: configuration.sourceMemoryLimit, diskCache: sourceDisk,
            // The loader admits downloads (in flight, per host, its bounded queue, gauged):
            // it is the one queue. A second one here would hold, without bound or gauge,
            // whatever the loader's queue would have refused with 429.
            maximumConcurrentDownloads: .max,
            // The service answers many clients: a shared cache (no `private`, `s-maxage`).
            isSharedCache: true, maximumResponseSize: configuration.maxSourceBytes,
            decodingLimits: limits)
        sources.memoryCacheMinimumUses = configuration.memoryCacheMinimumUses
        // Sources read from the disk cache are charged where downloaded ones are.
        sources.cachedDataMemory = memory
        pipeline = ImagePipeline(configuration: sources)
        results = ResultCache(
            memoryLimit: configuration.resultMemoryLimit, minimumUses: configuration.memoryCacheMinimumUses, disk: resultDisk,
            lifetime: TimeInterval(configuration.timeToLive),
            onDiskError: { metrics.diskErrors.increment() })
        admission = CPUAdmission(workers: configuration.workers, queueLimit: configuration.queueLimit, memory: memory) { snapshot in
            metrics.workersBusy.set(snapshot.busy)
            metrics.queued.set(snapshot.waiting)
        }
    }

    // MARK: - Answering

    /// Answers one request. Never throws: every failure is a response with its status code.
    /// Cancelling the calling task (the client went away) cancels the request's queued or
    /// running work unless other requests share it, and the request is counted and logged as
    /// 499 (imgproxy's code for it), apart from 503 while draining.
    public func respond(to request: ServiceRequest) async -> ServiceResponse {
        let started = ContinuousClock.now
        metrics.inProgress.increment()
        // Within a day whatever the API was given, so the conversion below stays in range.
        let timeout = configuration.requestTimeout.isFinite ? min(max(configuration.requestTimeout, 0.001), 86_400) : 86_400
        // The request's ledger: every buffer its work makes is charged to the memory budget
        // through it, in whatever task the work runs (it is inherited), until the buffer goes.
        let ledger = MemoryLedger(budget: memory)
        var response = await withDeadline(.milliseconds(Int64(timeout * 1000)), late: .error(.deadlineExceeded(timeout))) { [self] in
            await ledger.charging { await answer(request) }
        }
        metrics.inProgress.decrement()
        if Task.isCancelled, !isDraining { response = .error(.clientClosedRequest) }
        let duration = ContinuousClock.now - started
        metrics.recordRequest(status: response.status, duration: duration)
        log(request, response, duration)
        if request.isHead { response.body = Data() }
        return response
    }

    /// True while the service takes new work (`GET /ready`): not draining, neither queue full,
    /// and an eighth of the memory budget free — a budget held full (by sources, renders, or
    /// one origin's bodies) answers 429 to what a balancer would send it.
    public var isReady: Bool { notReadyReason == nil }

    /// Why the service takes no new work now, or nil: the one place readiness is decided.
    private var notReadyReason: String? {
        if isDraining { return "draining" }
        if admission.isSaturated || loader.admission.isSaturated { return "busy: the queue is full" }
        if memory.bytesInUse > memory.capacity - memory.capacity / 8 { return "busy: the memory budget is nearly full" }
        return nil
    }

    /// True once `startDraining()` was called.
    public var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// From now on `/ready` answers 503 and new image requests 503; requests already running
    /// finish.
    public func startDraining() {
        draining.store(true, ordering: .releasing)
    }

    /// Waits for queued disk writes (results and sources) to land.
    public func flush() async {
        await results.flush()
        await pipeline.flushDiskWrites()
    }

    /// Counters since the service started.
    public var statistics: Statistics { counters.snapshot }

    /// Sets `image_engine_disk_cache_bytes`, `image_engine_disk_cache_entries` and
    /// `image_engine_disk_cache_limit_bytes` (`cache="sources"` and `"results"`) from the disk
    /// caches' own accounting: what `image-engine cache stats` prints, which cannot open a
    /// directory a running instance holds. `ThumbnailServer` calls it at each `/metrics` scrape;
    /// an embedder that serves its own metrics calls it before emitting them.
    public func updateCacheMetrics() {
        for (name, cache) in diskCaches {
            metrics.recordDiskCache(name, cache.statistics)
        }
    }

    private func answer(_ request: ServiceRequest) async -> ServiceResponse {
        guard request.method == "GET" || request.isHead else { return .error(.methodNotAllowed, headers: [("Allow", "GET, HEAD")]) }
        switch request.path {
        case "/health": return .text(200, "ok")
        case "/ready": return notReadyReason.map { .text(503, $0) } ?? .text(200, "ready")
        default: break
        }
        if isDraining { return .error(.draining) }
        guard request.path.utf8.count <= configuration.maxPathLength else { return .error(.pathTooLong) }
        // Before the signature: a path a cache in front would rewrite is nobody's to sign.
        if let segment = URLSigner.dotSegment(in: request.path) { return .error(.dotSegment(segment)) }
        do throws(ServiceError) {
            let job = try ProcessingJob(request, service: self)
            var response = await serve(job, request)
            // Caches in front must keep one answer per Accept: the next client may not take WebP.
            if job.negotiatesFormat, response.status == 200 || response.status == 304 { response.headers.append(("Vary", "Accept")) }
            if !job.isCanonicalSpelling, response.status == 200 || response.status == 304 {
                response.headers =
                    response.headers.filter { $0.name != "Cache-Control" && $0.name != "Expires" } + [
                        ("Cache-Control", "private, no-store")
                    ]
            }
            return response
        } catch {
            return .error(error)
        }
    }

    private func log(_ request: ServiceRequest, _ response: ServiceResponse, _ duration: Duration) {
        let milliseconds = duration.milliseconds
        let path = request.path.count > 256 ? String(request.path.prefix(256)) + "…" : request.path
        let bytes = request.isHead ? 0 : response.body.count
        logger.info(
            "\(request.method) \(path) \(response.status) \(bytes) B \(String(format: "%.1f", milliseconds)) ms\(response.cacheLayer.map { " " + $0 } ?? "")",
            metadata: [
                "method": "\(request.method)", "path": "\(path)", "status": .stringConvertible(response.status),
                "bytes": .stringConvertible(bytes), "ms": .stringConvertible((milliseconds * 10).rounded() / 10),
                "cache": "\(response.cacheLayer ?? "-")"
            ])
    }
}
