import ImageCache
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
    func subscribe(_ key: Key, priority: ImageRequest.Priority, operation: @escaping SharedJob<Value>.Operation,
                   handler: @escaping @Sendable (JobEvent<Value>) -> Void) -> (subscription: JobSubscription, joined: Bool) {
        while true {
            if coalesces, let existing = lock.withLock({ jobs[key] }),
               let subscription = existing.subscribe(priority: priority, handler: handler) {
                return (subscription, true)
            }
            let job = SharedJob<Value>(priority: priority) { [weak self] job in self?.remove(key, job) }
            let registered = lock.withLock { () -> Bool in
                guard coalesces else { return true }
                if jobs[key] != nil { return false }  // another caller won the race: join that one
                jobs[key] = job
                return true
            }
            guard registered else { continue }
            // Subscribe before starting, so a fast job cannot finish with nobody listening.
            guard let subscription = job.subscribe(priority: priority, handler: handler) else { continue }
            job.start(operation)
            return (subscription, false)
        }
    }

    private func remove(_ key: Key, _ job: SharedJob<Value>) {
        lock.withLock { if jobs[key] === job { jobs[key] = nil } }
    }

    /// Jobs running now.
    var count: Int { lock.withLock { jobs.count } }
}
