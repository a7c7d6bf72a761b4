import Dispatch
import ImageCodec
import Locking

/// The one place the pipeline's shared bookkeeping lives: jobs and their subscribers, the
/// registry that coalesces identical requests, the download and decode queues, and every
/// priority — one `CoordinatorState` behind one lock.
///
/// One lock rather than an actor: the calls that change this state come from synchronous code
/// (`ImageTask.priority`'s setter, `cancel()`, a prefetcher stopping) and must take effect in
/// the order they were made. Through an actor each would be a hop that can overtake the one
/// before it; under one lock a priority change reaches the job, its queued work and the
/// download it waits for in one step, and nothing can observe a half-made change. The
/// critical sections are dictionary and heap operations, never I/O: decodes, disk and network
/// run in the jobs' tasks and on the pipeline's threads, and handlers run after the lock is
/// released.
final class PipelineCoordinator: @unchecked Sendable {
    // @unchecked: `state` is only touched while `lock` is held.
    typealias Queue = CoordinatorState.Queue
    private let lock = Lock()
    private var state: CoordinatorState

    init(coalesces: Bool, maximumDownloads: Int, maximumDecodes: Int, decodeMemory: MemoryBudget?, maximumOriginalsHeld: Int = .max) {
        // In `Queue`'s order (its raw values index the array); a new case must say its bound here.
        let queues = Queue.allCases.map { queue in
            switch queue {
            case .original: SlotQueue(limit: maximumOriginalsHeld, memory: nil)
            case .download: SlotQueue(limit: maximumDownloads, memory: nil)
            case .decode: SlotQueue(limit: maximumDecodes, memory: decodeMemory)
            }
        }
        state = CoordinatorState(coalesces: coalesces, queues: queues)
    }

    // MARK: - Jobs

    /// Subscribes to the job for `job.key`, starting it with `job.operation` if none runs (or if
    /// the pipeline does not coalesce). With `dependent`, the subscriber is that job, and follows
    /// its priority from now on. Returns the subscription and whether a running job was joined.
    func subscribe<Value: Sendable>(
        _ job: JobSpec<Value>, priority: ImageRequest.Priority, dependent: JobID? = nil,
        handler: @escaping @Sendable (JobEvent<Value>) -> Void
    ) -> (subscription: JobSubscription, joined: Bool) {
        let erased: CoordinatorState.Handler = { event in
            switch event {
            case .progress(let received, let expected): handler(.progress(received: received, expected: expected))
            case .finished(let result):
                // A job key's kind fixes its value type: data keys give `OriginalData`, image keys `ImageResponse`.
                handler(.finished(result.flatMap { ($0 as? Value).map(Result.success) ?? .failure(.cancelled) }))
            }
        }
        let (ref, started) = mutate { state, effects in
            state.subscribe(job.key, priority: priority, dependent: dependent, handler: erased, effects: &effects)
        }
        if started { start(ref.job, job.operation) } else { escalate(ref.job, to: Task.currentPriority) }
        return (JobSubscription(ref: ref, coordinator: self), !started)
    }

    /// A joiner's Swift task priority reaches the job's task (priorities only ever rise): a job
    /// a prefetch started at `.low` runs on at the priority of the visible cell that joined
    /// it, as does the download it waits for, which it subscribed to from that task.
    ///
    /// A joiner can arrive between the job's registration and its task's attachment (`start`
    /// makes the task outside the lock): its priority is then kept and applied on attachment.
    private func escalate(_ id: JobID, to priority: TaskPriority) {
        guard let task = lock.withLock({ state.taskToEscalate(id, to: priority) }) else { return }
        task.escalatePriority(to: priority)
    }

    /// Subscribes (as `subscribe` does) and waits for the result. Leaving happens when the
    /// calling task is cancelled, even before the subscription exists.
    func result<Value: Sendable>(
        of job: JobSpec<Value>, priority: ImageRequest.Priority, dependent: JobID? = nil,
        progress: @escaping @Sendable (Int, Int?) -> Void = { _, _ in }, onJoin: @Sendable () -> Void = {}
    ) async -> Result<Value, ImagePipelineError> {
        let pending = PendingCancellation<JobSubscription>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ImagePipelineError>, Never>) in
                let (subscription, joined) = subscribe(job, priority: priority, dependent: dependent) { event in
                    switch event {
                    case .progress(let received, let expected): progress(received, expected)
                    case .finished(let result): continuation.resume(returning: result)
                    }
                }
                if joined { onJoin() }
                if !pending.attach(subscription) { subscription.cancel() }
            }
        } onCancel: {
            pending.cancel()?.cancel()
        }
    }

    /// A priority change's only effects are slot grants (continuations resumed) and stores
    /// into the job's downloads' priorities: no handler runs, so a caller may hold its own lock
    /// around this call (ImageTask does, so that its priority and its subscriber's never
    /// disagree).
    func setPriority(_ priority: ImageRequest.Priority, of ref: SubscriberRef) {
        lock.withLock { priorityChangeSeam }?(priority)
        mutate { state, effects in state.setPriority(priority, of: ref, effects: &effects) }
    }

    /// Called with each priority change before the coordinator takes it (tests hold a change
    /// here to force an interleaving).
    private var priorityChangeSeam: (@Sendable (ImageRequest.Priority) -> Void)?

    /// Installs the seam above (tests only).
    func interceptPriorityChanges(_ seam: @escaping @Sendable (ImageRequest.Priority) -> Void) {
        lock.withLock { priorityChangeSeam = seam }
    }

    /// The subscriber's priority; nil once it has left or its job finished.
    func priority(of ref: SubscriberRef) -> ImageRequest.Priority? {
        lock.withLock { state.jobs[ref.job]?.subscribers[ref.subscriber]?.priority }
    }

    func cancel(_ ref: SubscriberRef) {
        mutate { state, effects in state.unsubscribe(ref, effects: &effects) }
    }

    func downloadPriority(of id: JobID) -> DownloadPriority {
        lock.withLock { state.downloadPriority(of: id) } ?? DownloadPriority(.normal)
    }

    func reportProgress(of id: JobID, received: Int, expected: Int?) {
        let handlers = lock.withLock { state.progressHandlers(of: id) }
        handlers.forEach { $0(.progress(received: received, expected: expected)) }
    }

    private func start<Value: Sendable>(_ id: JobID, _ operation: @escaping @Sendable (JobContext) async throws(ImagePipelineError) -> Value) {
        let context = JobContext(id: id, coordinator: self)
        let task = Task {
            let result: Result<any Sendable, ImagePipelineError>
            do throws(ImagePipelineError) {
                try Task.checkCancellation(or: ImagePipelineError.cancelled)
                result = .success(try await operation(context))
            } catch {
                result = .failure(error)
            }
            self.mutate { state, effects in state.finish(id, with: result, effects: &effects) }
        }
        let (attached, escalation) = lock.withLock { state.attach(task, to: id) }
        if !attached { task.cancel() }
        if let escalation { task.escalatePriority(to: escalation) }
    }

    // MARK: - Slots

    /// Runs `body` once `job` has a slot in `queue` (and, for decodes, `cost` bytes of the
    /// memory budget), waiting at the job's priority and following its changes; throws
    /// `.cancelled` if the task is cancelled or the job abandoned while waiting.
    func run<T>(
        _ queue: Queue, for job: JobContext, cost: Int = 0, _ body: () async throws(ImagePipelineError) -> T
    ) async throws(ImagePipelineError) -> T {
        try await acquire(queue, for: job.id, cost: cost)
        defer { mutate { state, effects in state.release(queue, cost: cost, effects: &effects) } }
        return try await body()
    }

    /// Runs the synchronous `body` on a dispatch thread once a slot is free, so CPU-bound work
    /// (decoding) never occupies the cooperative thread pool that the network code runs on.
    /// The thread's QoS follows the job's priority when the slot is granted
    /// (`ImageRequest.Priority.threadQoS`); a change after that cannot move a running thread.
    func runOnThread<T: Sendable>(
        _ queue: Queue, for job: JobContext, cost: Int = 0, _ body: @escaping @Sendable () -> T
    ) async throws(ImagePipelineError) -> T {
        try await run(queue, for: job, cost: cost) { () async -> T in
            let (priority, seam) = lock.withLock { (state.jobs[job.id]?.priority, threadQoSSeam) }
            let qos = (priority ?? .normal).threadQoS
            seam?(qos)
            return await withCheckedContinuation { continuation in
                DispatchQueue.global(qos: qos).async { continuation.resume(returning: body()) }
            }
        }
    }

    /// Called with the QoS of each thread `runOnThread` dispatches to (tests: Linux's dispatch
    /// cannot report a thread's QoS back).
    private var threadQoSSeam: (@Sendable (DispatchQoS.QoSClass) -> Void)?

    /// Installs the seam above (tests only).
    func observeThreadQoS(_ seam: @escaping @Sendable (DispatchQoS.QoSClass) -> Void) {
        lock.withLock { threadQoSSeam = seam }
    }

    private func acquire(_ queue: Queue, for job: JobID, cost: Int) async throws(ImagePipelineError) {
        let pending = PendingCancellation<CoordinatorState.WaitRef>()
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let entry = mutate { state, effects in state.enter(queue, for: job, cost: cost, continuation: continuation, effects: &effects) }
                switch entry {
                case .granted: continuation.resume(returning: true)
                case .jobGone: continuation.resume(returning: false)
                case .waiting(let wait): if !pending.attach(wait) { leave(wait) }
                }
            }
        } onCancel: {
            if let wait = pending.cancel() { leave(wait) }
        }
        guard granted else { throw .cancelled }
    }

    private func leave(_ wait: CoordinatorState.WaitRef) {
        mutate { state, effects in state.leave(wait, effects: &effects) }
    }

    // MARK: - Inspecting (statistics and tests)

    /// Work waiting for a slot in `queue`.
    func waitingCount(_ queue: Queue) -> Int { lock.withLock { state.queues[queue.rawValue].waiters.count } }
    /// Work holding a slot in `queue`.
    func runningCount(_ queue: Queue) -> Int { lock.withLock { state.queues[queue.rawValue].running } }
    /// Slots in `queue`.
    func limit(_ queue: Queue) -> Int { lock.withLock { state.queues[queue.rawValue].limit } }
    /// Heap entries in `queue`, live and stale.
    func heapCount(_ queue: Queue) -> Int { lock.withLock { state.queues[queue.rawValue].heapCount } }
    /// Jobs in flight.
    var jobCount: Int { lock.withLock { state.jobs.count } }
    /// The priority of the job running for `key`, if one is.
    func priority(of key: JobKey) -> ImageRequest.Priority? {
        lock.withLock { state.registry[key].flatMap { state.jobs[$0]?.priority } }
    }
    /// The priorities `queue`'s waiters wait at.
    func waitingPriorities(_ queue: Queue) -> [ImageRequest.Priority] {
        lock.withLock { state.queues[queue.rawValue].waiters.values.map(\.priority) }
    }

    // MARK: -

    /// Changes the state under the lock, then performs what it asked for outside it, in order.
    @discardableResult
    private func mutate<T>(_ body: (inout CoordinatorState, inout [CoordinatorState.Effect]) -> T) -> T {
        var effects: [CoordinatorState.Effect] = []
        let result = lock.withLock { body(&state, &effects) }
        for effect in effects {
            switch effect {
            case .deliver(let handler, let event): handler(event)
            case .resume(let continuation, let granted): continuation.resume(returning: granted)
            case .cancel(let task): task.cancel()
            }
        }
        return result
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws `error` when the current task is cancelled.
    static func checkCancellation<E: Error>(or error: E) throws(E) {
        if Task.isCancelled { throw error }
    }
}
