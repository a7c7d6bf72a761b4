import ImageCache
import ImageCodec
import Locking

/// Loads images ahead of display (the grid's next rows) at low priority, into the caches.
///
/// A prefetched image is loaded as display would load it, so when the cell asks, it is a memory
/// hit, or it joins the prefetch still in flight (raising its priority) instead of starting over.
/// With `.encodedResponse`, prefetching stores the original bytes (header checked) without
/// decoding them; display decodes them.
///
/// ```swift
/// prefetcher.startPrefetching(with: nextRows.map { ImageRequest(url: $0, maxPixelSize: 400) })
/// prefetcher.stopPrefetching(with: rowsScrolledPast)   // cancels what has not finished
/// ```
public final class ImagePrefetcher: @unchecked Sendable {
    // @unchecked: `running` is only touched while `lock` is held.
    /// The pipeline prefetched images are loaded through (and cached in).
    public let pipeline: ImagePipeline
    /// The priority prefetches run at (requests' own priorities are replaced).
    public let priority: ImageRequest.Priority
    private let lock = Lock()
    private var running: [ImageJobKey: JobSubscription] = [:]

    /// A prefetcher feeding `pipeline`'s caches.
    public init(pipeline: ImagePipeline, priority: ImageRequest.Priority = .low) {
        self.pipeline = pipeline
        self.priority = priority
    }

    /// Starts loading each request not already cached or being prefetched.
    public func startPrefetching(with requests: [ImageRequest]) {
        for var request in requests {
            request.priority = priority
            let key = pipeline.imageJobKey(for: request)
            guard lock.withLock({ running[key] == nil }), !pipeline.isInMemory(request) else { continue }
            let subscription = pipeline.prefetch(request) { [weak self] in self?.finished(key) }
            lock.withLock { running[key] = subscription }
        }
    }

    /// Stops prefetching these requests; work a display request also waits for goes on.
    public func stopPrefetching(with requests: [ImageRequest]) {
        let subscriptions = lock.withLock {
            requests.compactMap { running.removeValue(forKey: pipeline.imageJobKey(for: $0)) }
        }
        subscriptions.forEach { $0.cancel() }
    }

    /// Stops every prefetch.
    public func stopPrefetching() {
        let subscriptions = lock.withLock { () -> [JobSubscription] in
            defer { running.removeAll() }
            return Array(running.values)
        }
        subscriptions.forEach { $0.cancel() }
    }

    /// Prefetches in flight.
    public var count: Int { lock.withLock { running.count } }

    private func finished(_ key: ImageJobKey) {
        lock.withLock { _ = running.removeValue(forKey: key) }
    }
}

extension ImagePipeline {
    /// True when the memory cache could serve `request` now (nothing counted, nothing decoded).
    func isInMemory(_ request: ImageRequest) -> Bool {
        let now = configuration.clock.now
        if let imageMemory { return imageMemory.value(forKey: memoryKey(for: request))?.info.isFresh(at: now) ?? false }
        return dataMemory?.value(forKey: request.dataKey)?.info.isFresh(at: now) ?? false
    }

    /// Starts a prefetch: the image job for decoded strategies, the data job for
    /// `.encodedResponse`. `done` runs when it ends, however it ends.
    func prefetch(_ request: ImageRequest, done: @escaping @Sendable () -> Void) -> JobSubscription {
        if configuration.strategy != .encodedResponse {
            return imageJobs.subscribe(imageJobKey(for: request), priority: request.priority,
                                       operation: { [self] job throws(ImagePipelineError) in try await loadImage(request, job: job) },
                                       handler: { event in if case .finished = event { done() } }).subscription
        }
        let key = DataJobKey(dataKey: request.dataKey, policy: request.cachePolicy, memoryValidators: nil)
        return dataJobs.subscribe(key, priority: request.priority,
                                  operation: { [self] job throws(ImagePipelineError) in try await loadOriginal(request, key: key, job: job) },
                                  handler: { event in
                                      guard case .finished(let result) = event else { return }
                                      // Bytes are stored only if their header decodes.
                                      if case .success(let original) = result, let data = original.data,
                                         (try? ImageDecoder.header(of: data)) != nil {
                                          original.commit?.run()
                                      }
                                      done()
                                  }).subscription
    }
}
