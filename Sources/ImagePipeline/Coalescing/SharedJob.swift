import Locking

/// One piece of work (a download, a decode) shared by every request that needs it.
///
/// It runs at the highest priority of its subscribers and is cancelled when the last one
/// leaves; each subscriber gets the progress and the result. A subscriber that leaves early
/// gets `.cancelled` at once, and the others are not affected.
final class SharedJob<Value: Sendable>: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    typealias Operation = @Sendable (SharedJob<Value>) async throws(ImagePipelineError) -> Value
    typealias Handler = @Sendable (JobEvent<Value>) -> Void
    typealias PriorityObserver = @Sendable (ImageRequest.Priority) -> Void

    private struct Subscriber {
        var priority: ImageRequest.Priority
        var handler: Handler
    }

    private let lock = Lock()
    /// Held while priority observers are called, so each sees the changes in the order they
    /// happened (taken before `lock`, never the other way round).
    private let notifying = Lock()
    private var subscribers: [Int: Subscriber] = [:]
    private var nextSubscriber = 0
    private var ended = false
    private var task: Task<Void, Never>?
    private var observers: [PriorityObserver] = []
    private var currentPriority: ImageRequest.Priority
    /// Called once when the job ends (finished or abandoned), for the registry.
    private let onEnd: @Sendable (SharedJob<Value>) -> Void

    /// A job with its first subscriber (so it cannot end before anyone listens), not started.
    static func make(
        priority: ImageRequest.Priority, handler: @escaping Handler,
        onEnd: @escaping @Sendable (SharedJob<Value>) -> Void
    ) -> (SharedJob<Value>, JobSubscription) {
        let job = SharedJob(priority: priority, onEnd: onEnd)
        job.subscribers[0] = Subscriber(priority: priority, handler: handler)
        job.nextSubscriber = 1
        return (job, job.subscription(0))
    }

    private init(priority: ImageRequest.Priority, onEnd: @escaping @Sendable (SharedJob<Value>) -> Void) {
        currentPriority = priority
        self.onEnd = onEnd
    }

    /// The highest priority among the subscribers.
    var priority: ImageRequest.Priority { lock.withLock { currentPriority } }

    /// True once the job has finished or been abandoned; it takes no more subscribers.
    var hasEnded: Bool { lock.withLock { ended } }

    /// Calls `observer` with the priority now, and again after every change, in order.
    func observePriority(_ observer: @escaping PriorityObserver) {
        notifying.withLock {
            let priority = lock.withLock { () -> ImageRequest.Priority in
                observers.append(observer)
                return currentPriority
            }
            observer(priority)
        }
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

    /// Adds a subscriber; nil when the job has already ended (the caller then starts a new
    /// one). The priority observers are told about a raise only after the call returns: call
    /// `notifyPriority()` then (the registry calls it outside its own lock).
    func subscribe(priority: ImageRequest.Priority, handler: @escaping Handler) -> (subscription: JobSubscription, raised: Bool)? {
        let added = lock.withLock { () -> (Int, Bool)? in
            guard !ended else { return nil }
            let id = nextSubscriber
            nextSubscriber += 1
            subscribers[id] = Subscriber(priority: priority, handler: handler)
            return (id, updatePriority())
        }
        guard let (id, raised) = added else { return nil }
        return (subscription(id), raised)
    }

    /// Reports progress to every subscriber.
    func reportProgress(received: Int, expected: Int?) {
        let handlers = lock.withLock { subscribers.values.map(\.handler) }
        handlers.forEach { $0(.progress(received: received, expected: expected)) }
    }

    /// Tells the observers the priority now (under `notifying`, so the last call they see
    /// carries the latest value, whatever order changes raced in).
    func notifyPriority() {
        notifying.withLock {
            let (priority, observers) = lock.withLock { (currentPriority, self.observers) }
            observers.forEach { $0(priority) }
        }
    }

    private func subscription(_ id: Int) -> JobSubscription {
        JobSubscription(
            cancel: { [weak self] in self?.unsubscribe(id) },
            setPriority: { [weak self] priority in self?.setPriority(priority, of: id) })
    }

    private func setPriority(_ priority: ImageRequest.Priority, of id: Int) {
        let changed = lock.withLock { () -> Bool in
            guard subscribers[id] != nil else { return false }
            subscribers[id]?.priority = priority
            return updatePriority()
        }
        if changed { notifyPriority() }
    }

    /// Recomputes the priority (call with `lock` held); true when it changed.
    private func updatePriority() -> Bool {
        guard let highest = subscribers.values.map(\.priority).max(), highest != currentPriority else { return false }
        currentPriority = highest
        return true
    }

    private enum Departure {
        /// Gone already (finished, or left before).
        case none
        /// Others still wait; the priority may have dropped.
        case left(Handler, priorityChanged: Bool)
        /// It was the last: the job is abandoned and its task cancelled.
        case abandoned(Handler, Task<Void, Never>?)
    }

    private func unsubscribe(_ id: Int) {
        let departure = lock.withLock { () -> Departure in
            guard !ended, let subscriber = subscribers.removeValue(forKey: id) else { return .none }
            guard subscribers.isEmpty else { return .left(subscriber.handler, priorityChanged: updatePriority()) }
            ended = true
            return .abandoned(subscriber.handler, task)
        }
        switch departure {
        case .none:
            return
        case .left(let handler, let priorityChanged):
            if priorityChanged { notifyPriority() }
            handler(.finished(.failure(.cancelled)))
        case .abandoned(let handler, let task):
            onEnd(self)
            task?.cancel()
            handler(.finished(.failure(.cancelled)))
        }
    }

    private func finish(_ result: Result<Value, ImagePipelineError>) {
        let handlers = lock.withLock { () -> [Handler]? in
            guard !ended else { return nil }
            ended = true
            defer {
                subscribers.removeAll()
                observers.removeAll()
            }
            return subscribers.values.map(\.handler)
        }
        guard let handlers else { return }
        onEnd(self)
        handlers.forEach { $0(.finished(result)) }
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws `error` when the current task is cancelled.
    static func checkCancellation<E: Error>(or error: E) throws(E) {
        if Task.isCancelled { throw error }
    }
}
