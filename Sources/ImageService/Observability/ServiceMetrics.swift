import CoreMetrics
import Locking
import Metrics

/// The service's metrics, through swift-metrics (so any backend can take them; `serve`
/// bootstraps Prometheus). Every name starts with `image_engine_`.
final class ServiceMetrics: @unchecked Sendable {
    // @unchecked: `requestCounters` is only touched while `lock` is held; the rest are
    // swift-metrics objects, which are thread-safe.
    private let factory: any MetricsFactory
    private let lock = Lock()
    private var requestCounters: [Int: Counter] = [:]
    private var layerCounters: [String: Counter] = [:]

    private let requestDuration: Metrics.Timer
    private let queueDuration: Metrics.Timer
    private let downloadDuration: Metrics.Timer
    private let processDuration: Metrics.Timer
    let inProgress: Meter
    let workersBusy: Meter
    let queued: Meter
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
        coalesced = Counter(label: "image_engine_coalesced_requests_total", factory: factory)
        sourceBytes = Counter(label: "image_engine_source_bytes_total", factory: factory)
        diskErrors = Counter(label: "image_engine_disk_errors_total", factory: factory)
        // Present from the start, so a scrape before the first request sees every series.
        for layer in ["result-memory", "result-disk", "source-memory", "source-disk"] { _ = layerCounter(layer) }
        inProgress.set(0)
        workersBusy.set(0)
        queued.set(0)
    }

    /// One finished request: its status and how long it took.
    func recordRequest(status: Int, duration: Duration) {
        let counter = lock.withLock { () -> Counter in
            if let counter = requestCounters[status] { return counter }
            let counter = Counter(label: "image_engine_requests_total", dimensions: [("status", String(status))], factory: factory)
            requestCounters[status] = counter
            return counter
        }
        counter.increment()
        requestDuration.record(duration: duration)
    }

    /// A hit in a cache layer (`result-memory`, `result-disk`, `source-memory`, `source-disk`).
    func recordHit(layer: String) {
        layerCounter(layer).increment()
    }

    /// The phases of a render, in milliseconds.
    func recordPhases(_ timing: PhaseTiming) {
        if let queue = timing.queue { queueDuration.recordMilliseconds(queue) }
        if let download = timing.download { downloadDuration.recordMilliseconds(download) }
        let process = (timing.decode ?? 0) + (timing.encode ?? 0)
        if timing.decode != nil { processDuration.recordMilliseconds(process) }
    }

    private func layerCounter(_ layer: String) -> Counter {
        lock.withLock {
            if let counter = layerCounters[layer] { return counter }
            let counter = Counter(label: "image_engine_cache_hits_total", dimensions: [("layer", layer)], factory: factory)
            layerCounters[layer] = counter
            return counter
        }
    }
}
