import Locking

/// Loads images ahead of display (the grid's next rows) at low priority, into the caches.
///
/// A prefetched image is loaded as display would load it, so when the cell asks, it is a memory
/// hit, or it joins the prefetch still in flight (raising its priority) instead of starting over.
/// With `.encodedResponse`, prefetching stores the original bytes (header checked) without
/// decoding them; display decodes them. A prefetcher that goes away stops its prefetches.
///
/// ```swift
/// prefetcher.startPrefetching(with: nextRows.map { ImageRequest(url: $0, resize: .fill(width: 400, height: 400)) })
/// prefetcher.stopPrefetching(with: rowsScrolledPast)   // cancels what has not finished
/// ```
public final class ImagePrefetcher: @unchecked Sendable {
    // @unchecked: `running` and `nextID` are only touched while `lock` is held.
    /// The pipeline prefetched images are loaded through (and cached in).
    public let pipeline: ImagePipeline
    /// The priority prefetches run at (requests' own priorities are replaced).
    public let priority: ImageRequest.Priority
    private let lock = Lock()
    /// Each prefetch by key, registered before it starts, with an identity: a late finish of
    /// an older prefetch must not remove a newer one for the same key.
    private var running: [JobKey: (id: Int, subscription: PendingCancellation<JobSubscription>)] = [:]
    private var nextID = 0

    /// A prefetcher feeding `pipeline`'s caches.
    public init(pipeline: ImagePipeline, priority: ImageRequest.Priority = .low) {
        self.pipeline = pipeline
        self.priority = priority
    }

    deinit {
        stopPrefetching()
    }

    /// Starts loading each request not already cached or being prefetched.
    public func startPrefetching(with requests: [ImageRequest]) {
        for var request in requests {
            request.priority = priority
            let key = pipeline.prefetchKey(for: request)
            guard !pipeline.isInMemory(request) else { continue }
            // Claimed under the lock before anything starts: of two concurrent starts for a key,
            // one prefetches; a prefetch that finishes at once finds itself registered.
            let claim = lock.withLock { () -> (id: Int, subscription: PendingCancellation<JobSubscription>)? in
                guard running[key] == nil else { return nil }
                nextID += 1
                let claim = (id: nextID, subscription: PendingCancellation<JobSubscription>())
                running[key] = claim
                return claim
            }
            guard let claim else { continue }
            let subscription = pipeline.prefetch(request) { [weak self] in self?.finished(key, id: claim.id) }
            // Stopped while starting: stop it now.
            if !claim.subscription.attach(subscription) { subscription.cancel() }
        }
    }

    /// Stops prefetching these requests; work a display request also waits for goes on.
    public func stopPrefetching(with requests: [ImageRequest]) {
        let stopped = lock.withLock {
            requests.compactMap { running.removeValue(forKey: pipeline.prefetchKey(for: $0))?.subscription }
        }
        stopped.forEach { $0.cancel()?.cancel() }
    }

    /// Stops every prefetch.
    public func stopPrefetching() {
        let stopped = lock.withLock { () -> [PendingCancellation<JobSubscription>] in
            defer { running.removeAll() }
            return running.values.map(\.subscription)
        }
        stopped.forEach { $0.cancel()?.cancel() }
    }

    /// Prefetches in flight.
    public var count: Int { lock.withLock { running.count } }

    /// A prefetch ended: it leaves the list, unless a newer prefetch for its key took its
    /// place (the old one's end can arrive after a stop and a restart).
    func finished(_ key: JobKey, id: Int) {
        lock.withLock { if running[key]?.id == id { running[key] = nil } }
    }

    /// The identity of the prefetch listed for `request`, if any (for tests of `finished`).
    func prefetchID(for request: ImageRequest) -> Int? {
        var request = request
        request.priority = priority
        return lock.withLock { running[pipeline.prefetchKey(for: request)]?.id }
    }
}
