import CoreMetrics
import ImageCache
import Locking
import Metrics

/// The service's metrics, through swift-metrics (so any backend can take them; `serve`
/// bootstraps Prometheus). Every name starts with `image_engine_`.
final class ServiceMetrics: @unchecked Sendable {
    // @unchecked: `dimensionedCounters` is only touched while `lock` is held; the rest are
    // swift-metrics objects, which are thread-safe.
    private let factory: any MetricsFactory
    private let lock = Lock()
    /// Counters with one dimension, made on first use, by label, dimension and value.
    private var dimensionedCounters: [CounterKey: Counter] = [:]

    private struct CounterKey: Hashable {
        let label: String
        let dimension: String
        let value: String
    }

    private let requestDuration: Metrics.Timer
    private let queueDuration: Metrics.Timer
    private let downloadDuration: Metrics.Timer
    private let processDuration: Metrics.Timer
    let inProgress: Meter
    let workersBusy: Meter
    let queued: Meter
    let downloadsInProgress: Meter
    let downloadQueue: Meter
    let memoryInUse: Meter
    let dnsLookupsInProgress: Meter
    let dnsLookupsWaiting: Meter
    let coalesced: Counter
    let sourceBytes: Counter
    let diskErrors: Counter

    init(factory: any MetricsFactory) {
        self.factory = factory
        requestDuration = Metrics.Timer(label: "image_engine_request_duration_seconds", factory: factory)
        queueDuration = Metrics.Timer(label: "image_engine_queue_duration_seconds", factory: factory)
        downloadDuration = Metrics.Timer(label: "image_engine_download_duration_seconds", factory: factory)
        processDuration = Metrics.Timer(label: "image_engine_process_duration_seconds", factory: factory)
        inProgress = Meter(label: "image_engine_requests_in_progress", factory: factory)
        workersBusy = Meter(label: "image_engine_workers_busy", factory: factory)
        queued = Meter(label: "image_engine_queue_length", factory: factory)
        downloadsInProgress = Meter(label: "image_engine_downloads_in_progress", factory: factory)
        downloadQueue = Meter(label: "image_engine_download_queue_length", factory: factory)
        dnsLookupsInProgress = Meter(label: "image_engine_dns_lookups_in_progress", factory: factory)
        dnsLookupsWaiting = Meter(label: "image_engine_dns_lookups_waiting", factory: factory)
        memoryInUse = Meter(label: "image_engine_memory_bytes", factory: factory)
        coalesced = Counter(label: "image_engine_coalesced_requests_total", factory: factory)
        sourceBytes = Counter(label: "image_engine_source_bytes_total", factory: factory)
        diskErrors = Counter(label: "image_engine_disk_errors_total", factory: factory)
        // Present from the start, so a scrape before the first request sees every series.
        for layer in ["result-memory", "result-disk", "source-memory", "source-disk"] {
            _ = counter("image_engine_cache_hits_total", "layer", layer)
        }
        for gauge in [inProgress, workersBusy, queued, downloadsInProgress, downloadQueue, memoryInUse, dnsLookupsInProgress, dnsLookupsWaiting] {
            gauge.set(0)
        }
    }

    /// One source download, failed or not: its body bytes (once per download, whoever shares
    /// it) and how long it took.
    func recordDownload(bytes: Int, duration: Duration) {
        if bytes > 0 { sourceBytes.increment(by: bytes) }
        downloadDuration.record(duration: duration)
    }

    /// A disk cache's size, entries and limit (`cache="sources"` or `"results"`).
    func recordDiskCache(_ name: String, _ statistics: DiskCacheStatistics) {
        for (label, value) in [
            ("image_engine_disk_cache_bytes", statistics.totalBytes), ("image_engine_disk_cache_entries", statistics.count),
            ("image_engine_disk_cache_limit_bytes", statistics.sizeLimit)
        ] {
            Meter(label: label, dimensions: [("cache", name)], factory: factory).set(value)
        }
    }

    /// One finished request: its status and how long it took.
    func recordRequest(status: Int, duration: Duration) {
        counter("image_engine_requests_total", "status", String(status)).increment()
        requestDuration.record(duration: duration)
    }

    /// A request whose source fetch failed, by `ServiceError.sourceFailureReason`.
    func recordSourceFailure(reason: String) {
        counter("image_engine_source_failures_total", "reason", reason).increment()
    }

    /// A hit in a cache layer (`result-memory`, `result-disk`, `source-memory`, `source-disk`).
    func recordHit(layer: String) {
        counter("image_engine_cache_hits_total", "layer", layer).increment()
    }

    /// The phases of a render, in milliseconds (downloads are recorded by `recordDownload`, once
    /// each, failed ones included).
    func recordPhases(_ timing: PhaseTiming) {
        if let queue = timing.queue { queueDuration.recordMilliseconds(queue) }
        let process = (timing.decode ?? 0) + (timing.encode ?? 0)
        if timing.decode != nil { processDuration.recordMilliseconds(process) }
    }

    /// The counter `label` with `dimension` = `value`, made the first time it is asked for.
    private func counter(_ label: String, _ dimension: String, _ value: String) -> Counter {
        let key = CounterKey(label: label, dimension: dimension, value: value)
        return lock.withLock {
            if let counter = dimensionedCounters[key] { return counter }
            let counter = Counter(label: label, dimensions: [(dimension, value)], factory: factory)
            dimensionedCounters[key] = counter
            return counter
        }
    }
}
