import Dispatch
import ImageCache
import Locking

/// Limits how many operations of one kind (downloads, decodes) run at once; waiting ones start
/// highest priority first.
///
/// The priority of a waiting operation is read when a slot frees up, not when it was queued,
/// so raising a request's priority (a prefetched cell scrolling into view) moves its work
/// ahead at once. Among equal priorities, first come first served.
final class WorkQueue: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    private struct Waiter {
        let id: Int
        let priority: @Sendable () -> ImageRequest.Priority
        let continuation: CheckedContinuation<Bool, Never>
    }

    let maximumConcurrent: Int
    private let lock = Lock()
    private var running = 0
    private var waiters: [Waiter] = []
    private var nextID = 0
    /// Ids cancelled before their waiter was queued.
    private var cancelledEarly = Set<Int>()

    init(maximumConcurrent: Int) {
        self.maximumConcurrent = max(1, maximumConcurrent)
    }

    /// Runs `body` once a slot is free; throws `.cancelled` if the task is cancelled while waiting.
    func run<T>(priority: @escaping @Sendable () -> ImageRequest.Priority,
                _ body: () async throws(ImagePipelineError) -> T) async throws(ImagePipelineError) -> T {
        try await acquire(priority: priority)
        defer { release() }
        return try await body()
    }

    /// Runs the synchronous `body` on a dispatch thread once a slot is free, so CPU-bound work
    /// (decoding) never occupies the cooperative thread pool that the network code runs on.
    func runOnThread<T: Sendable>(priority: @escaping @Sendable () -> ImageRequest.Priority,
                                  _ body: @escaping @Sendable () -> T) async throws(ImagePipelineError) -> T {
        try await run(priority: priority) { () async -> T in
            await withCheckedContinuation { continuation in
                DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: body()) }
            }
        }
    }

    /// Operations waiting for a slot.
    var waitingCount: Int { lock.withLock { waiters.count } }

    private func acquire(priority: @escaping @Sendable () -> ImageRequest.Priority) async throws(ImagePipelineError) {
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        let acquired = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = lock.withLock { () -> Bool? in
                    if cancelledEarly.remove(id) != nil { return false }
                    if running < maximumConcurrent && waiters.isEmpty {
                        running += 1
                        return true
                    }
                    waiters.append(Waiter(id: id, priority: priority, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = lock.withLock { () -> Waiter? in
                guard let index = waiters.firstIndex(where: { $0.id == id }) else {
                    cancelledEarly.insert(id)
                    return nil
                }
                return waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
        // A cancellation that arrived after the slot was granted left its id behind; the body
        // sees the cancellation itself.
        lock.withLock { _ = cancelledEarly.remove(id) }
        guard acquired else { throw .cancelled }
    }

    private func release() {
        let next = lock.withLock { () -> Waiter? in
            guard !waiters.isEmpty else {
                running -= 1
                return nil
            }
            // Highest priority now; the earliest among equals.
            var best = 0
            var bestPriority = waiters[0].priority()
            for index in waiters.indices.dropFirst() {
                let priority = waiters[index].priority()
                if priority > bestPriority { (best, bestPriority) = (index, priority) }
            }
            return waiters.remove(at: best)
        }
        next?.continuation.resume(returning: true)
    }
}
