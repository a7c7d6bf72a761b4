import ImageCache
import Locking

/// What a job tells its subscribers.
enum JobEvent<Value: Sendable>: Sendable {
    case progress(received: Int, expected: Int?)
    case finished(Result<Value, ImagePipelineError>)
}

/// One piece of work (a download, a decode) shared by every request that needs it.
///
/// It runs at the highest priority of its subscribers and is cancelled when the last one
/// leaves; each subscriber gets the progress and the result. A subscriber that leaves early
/// gets `.cancelled` at once, and the others are not affected.
final class SharedJob<Value: Sendable>: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    typealias Operation = @Sendable (SharedJob<Value>) async throws(ImagePipelineError) -> Value

    private struct Subscriber {
        var priority: ImageRequest.Priority
        var handler: @Sendable (JobEvent<Value>) -> Void
    }

    private let lock = Lock()
    private var subscribers: [Int: Subscriber] = [:]
    private var nextSubscriber = 0
    private var isFinished = false
    private var task: Task<Void, Never>?
    private var priorityObservers: [@Sendable (ImageRequest.Priority) -> Void] = []
    private var currentPriority: ImageRequest.Priority
    /// Called once when the job ends (finished or abandoned), for the registry.
    private let onEnd: @Sendable (SharedJob<Value>) -> Void

    init(priority: ImageRequest.Priority, onEnd: @escaping @Sendable (SharedJob<Value>) -> Void) {
        currentPriority = priority
        self.onEnd = onEnd
    }

    /// The highest priority among the subscribers.
    var priority: ImageRequest.Priority { lock.withLock { currentPriority } }

    /// Runs `observer` whenever the priority changes (for queued work and dependencies).
    func observePriority(_ observer: @escaping @Sendable (ImageRequest.Priority) -> Void) {
        lock.withLock { priorityObservers.append(observer) }
    }

    func start(_ operation: @escaping Operation) {
        let task = Task {
            let result: Result<Value, ImagePipelineError>
            do throws(ImagePipelineError) {
                try Task.checkCancellation(or: ImagePipelineError.cancelled)
                result = .success(try await operation(self))
            } catch {
                result = .failure(error)
            }
            self.finish(result)
        }
        lock.withLock { self.task = task }
    }

    /// Adds a subscriber; nil when the job has already ended (the caller then starts a new one).
    func subscribe(priority: ImageRequest.Priority, handler: @escaping @Sendable (JobEvent<Value>) -> Void) -> JobSubscription? {
        let (id, observers, raised) = lock.withLock { () -> (Int?, [@Sendable (ImageRequest.Priority) -> Void], ImageRequest.Priority?) in
            guard !isFinished else { return (nil, [], nil) }
            let id = nextSubscriber
            nextSubscriber += 1
            subscribers[id] = Subscriber(priority: priority, handler: handler)
            let raised = updatePriority()
            return (id, raised == nil ? [] : priorityObservers, raised)
        }
        guard let id else { return nil }
        if let raised { observers.forEach { $0(raised) } }
        return JobSubscription(
            cancel: { [weak self] in self?.unsubscribe(id) },
            setPriority: { [weak self] priority in self?.setPriority(priority, of: id) })
    }

    /// Reports progress to every subscriber.
    func reportProgress(received: Int, expected: Int?) {
        let handlers = lock.withLock { subscribers.values.map(\.handler) }
        handlers.forEach { $0(.progress(received: received, expected: expected)) }
    }

    private func setPriority(_ priority: ImageRequest.Priority, of id: Int) {
        let (observers, changed) = lock.withLock { () -> ([@Sendable (ImageRequest.Priority) -> Void], ImageRequest.Priority?) in
            guard subscribers[id] != nil else { return ([], nil) }
            subscribers[id]?.priority = priority
            let changed = updatePriority()
            return (changed == nil ? [] : priorityObservers, changed)
        }
        if let changed { observers.forEach { $0(changed) } }
    }

    /// Recomputes the priority (call with `lock` held); the new value when it changed.
    private func updatePriority() -> ImageRequest.Priority? {
        guard let highest = subscribers.values.map(\.priority).max(), highest != currentPriority else { return nil }
        currentPriority = highest
        return highest
    }

    private func unsubscribe(_ id: Int) {
        let (handler, abandoned, task, observers, changed) = lock.withLock {
            () -> ((@Sendable (JobEvent<Value>) -> Void)?, Bool, Task<Void, Never>?, [@Sendable (ImageRequest.Priority) -> Void], ImageRequest.Priority?) in
            guard !isFinished, let subscriber = subscribers.removeValue(forKey: id) else { return (nil, false, nil, [], nil) }
            if subscribers.isEmpty {
                isFinished = true
                return (subscriber.handler, true, self.task, [], nil)
            }
            let changed = updatePriority()
            return (subscriber.handler, false, nil, changed == nil ? [] : priorityObservers, changed)
        }
        if abandoned {
            onEnd(self)
            task?.cancel()
        }
        if let changed { observers.forEach { $0(changed) } }
        handler?(.finished(.failure(.cancelled)))
    }

    private func finish(_ result: Result<Value, ImagePipelineError>) {
        let handlers = lock.withLock { () -> [@Sendable (JobEvent<Value>) -> Void] in
            guard !isFinished else { return [] }
            isFinished = true
            let handlers = subscribers.values.map(\.handler)
            subscribers.removeAll()
            priorityObservers.removeAll()
            return handlers
        }
        guard !handlers.isEmpty else { return }
        onEnd(self)
        handlers.forEach { $0(.finished(result)) }
    }
}

/// A subscriber's hold on a shared job.
struct JobSubscription: Sendable {
    /// Leaves the job (cancelling it if nobody else waits); the subscriber gets `.cancelled`.
    let cancel: @Sendable () -> Void
    /// Changes this subscriber's priority, and so possibly the job's.
    let setPriority: @Sendable (ImageRequest.Priority) -> Void
}

extension Task where Success == Never, Failure == Never {
    /// Throws `error` when the current task is cancelled.
    static func checkCancellation<E: Error>(or error: E) throws(E) {
        if Task.isCancelled { throw error }
    }
}
