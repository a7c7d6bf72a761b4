import Dispatch
import HeapModule
import Locking

/// Limits how many operations of one kind (downloads, decodes) run at once; waiting ones start
/// highest priority first, and among equal priorities first come first served.
///
/// A waiter's priority follows its job's: raising a request's priority (a prefetched cell
/// scrolling into view) moves its queued work ahead at once. Changes are pushed to the queue
/// (a heap entry per change, stale ones skipped when they surface), so releasing a slot costs
/// O(log n) under one lock whatever the number waiting, instead of asking every waiter.
final class WorkQueue: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    private struct Entry: Comparable {
        let priority: ImageRequest.Priority
        let arrival: Int
        let id: Int

        /// The heap's maximum is the highest priority, then the earliest arrival.
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.priority != rhs.priority ? lhs.priority < rhs.priority : lhs.arrival > rhs.arrival
        }
    }

    private struct Waiter {
        var priority: ImageRequest.Priority
        let arrival: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    let maximumConcurrent: Int
    private let lock = Lock()
    private var running = 0
    private var waiters: [Int: Waiter] = [:]
    private var order = Heap<Entry>()
    private var nextID = 0

    init(maximumConcurrent: Int) {
        self.maximumConcurrent = max(1, maximumConcurrent)
    }

    /// Runs `body` once a slot is free, waiting at `job`'s priority (and following its
    /// changes); throws `.cancelled` if the task is cancelled while waiting.
    func run<T, Job: Sendable>(for job: SharedJob<Job>, _ body: () async throws(ImagePipelineError) -> T) async throws(ImagePipelineError) -> T {
        try await acquire(for: job)
        defer { release() }
        return try await body()
    }

    /// Runs the synchronous `body` on a dispatch thread once a slot is free, so CPU-bound work
    /// (decoding) never occupies the cooperative thread pool that the network code runs on.
    func runOnThread<T: Sendable, Job: Sendable>(for job: SharedJob<Job>, _ body: @escaping @Sendable () -> T) async throws(ImagePipelineError) -> T {
        try await run(for: job) { () async -> T in
            await withCheckedContinuation { continuation in
                DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: body()) }
            }
        }
    }

    /// Operations waiting for a slot.
    var waitingCount: Int { lock.withLock { waiters.count } }

    /// Operations holding a slot.
    var runningCount: Int { lock.withLock { running } }

    private func acquire<Job: Sendable>(for job: SharedJob<Job>) async throws(ImagePipelineError) {
        let pending = PendingCancellation<Int>()
        let acquired = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let id = lock.withLock { () -> Int? in
                    if running < maximumConcurrent && waiters.isEmpty {
                        running += 1
                        return nil
                    }
                    nextID += 1
                    waiters[nextID] = Waiter(priority: job.priority, arrival: nextID, continuation: continuation)
                    order.insert(Entry(priority: job.priority, arrival: nextID, id: nextID))
                    return nextID
                }
                guard let id else { return continuation.resume(returning: true) }
                // Registered after queueing: it is called at once with the job's priority now,
                // so a change in between is not lost.
                job.observePriority { [weak self] priority in self?.setPriority(priority, of: id) }
                if !pending.attach(id) { abandon(id) }
            }
        } onCancel: {
            if let id = pending.cancel() { abandon(id) }
        }
        guard acquired else { throw .cancelled }
    }

    private func setPriority(_ priority: ImageRequest.Priority, of id: Int) {
        lock.withLock {
            guard var waiter = waiters[id], waiter.priority != priority else { return }
            waiter.priority = priority
            waiters[id] = waiter
            order.insert(Entry(priority: priority, arrival: waiter.arrival, id: id))
        }
    }

    /// A cancelled waiter leaves the queue (if a slot was granted meanwhile, the body sees the
    /// cancellation itself).
    private func abandon(_ id: Int) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: false)
    }

    private func release() {
        let next = lock.withLock { () -> Waiter? in
            while let entry = order.popMax() {
                // An entry from before a priority change, or for a waiter that left: skipped.
                guard let waiter = waiters[entry.id], waiter.priority == entry.priority else { continue }
                waiters[entry.id] = nil
                return waiter
            }
            running -= 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }
}
