import Locking

/// The jobs in flight, by key: a request for a key whose job is running joins it instead of
/// starting the same work again.
final class JobRegistry<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked: `jobs` is only touched while `lock` is held.
    private let lock = Lock()
    private var jobs: [Key: SharedJob<Value>] = [:]
    /// False runs every request on a job of its own (to measure what coalescing saves).
    let coalesces: Bool

    init(coalesces: Bool) {
        self.coalesces = coalesces
    }

    /// Subscribes to the job for `key`, starting it with `operation` if none is running.
    /// Returns the subscription and whether an existing job was joined.
    ///
    /// Joining and replacing happen under one lock: a job that has ended but not yet left the
    /// registry is replaced on the spot, so no caller loops waiting for it to go.
    func subscribe(
        _ key: Key, priority: ImageRequest.Priority, operation: @escaping SharedJob<Value>.Operation,
        handler: @escaping SharedJob<Value>.Handler
    ) -> (subscription: JobSubscription, joined: Bool) {
        let outcome = lock.withLock { () -> Subscribed in
            if coalesces, let existing = jobs[key], let (subscription, raised) = existing.subscribe(priority: priority, handler: handler) {
                return .joined(existing, subscription, raised: raised)
            }
            let (job, subscription) = SharedJob<Value>.make(priority: priority, handler: handler) { [weak self] job in
                self?.remove(key, job)
            }
            if coalesces { jobs[key] = job }
            return .started(job, subscription)
        }
        switch outcome {
        case .joined(let job, let subscription, let raised):
            if raised { job.notifyPriority() }
            return (subscription, true)
        case .started(let job, let subscription):
            job.start(operation)
            return (subscription, false)
        }
    }

    private enum Subscribed {
        case joined(SharedJob<Value>, JobSubscription, raised: Bool)
        case started(SharedJob<Value>, JobSubscription)
    }

    private func remove(_ key: Key, _ job: SharedJob<Value>) {
        lock.withLock { if jobs[key] === job { jobs[key] = nil } }
    }

    /// Jobs running now.
    var count: Int { lock.withLock { jobs.count } }
}
