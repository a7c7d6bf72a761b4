/// Everything the pipeline's requests share — the jobs in flight and their subscribers, the
/// registry that lets an identical request join a job, the download and decode queues, and
/// every priority — in one value, changed only under the coordinator's lock.
///
/// The invariants live here, each kept by one method:
/// - a job's priority is the highest of its subscribers' (`recompute`);
/// - a job's waits for a slot, and its subscriptions to the jobs it depends on, are at the
///   job's priority, changed in the same step as the job's (`recompute`);
/// - a job nobody waits for any more is gone: out of the registry, its waits out of the
///   queues, its dependencies left, its task cancelled (`abandon`);
/// - every subscriber gets exactly one `.finished` (`finish`, `unsubscribe`).
///
/// Methods never call out: what must happen outside the lock (a handler, a resumed waiter, a
/// cancelled task) is returned as `Effect`s, which the coordinator performs after unlocking.
struct CoordinatorState {
    typealias Handler = @Sendable (JobEvent<any Sendable>) -> Void

    /// The slot queues.
    enum Queue: Int, CaseIterable, Sendable {
        /// Image jobs holding an original, from its fetch to the end of its decode.
        case original
        case download, decode
    }

    /// A waiter in a queue, by queue and id.
    struct WaitRef: Hashable, Sendable {
        let queue: Queue
        let id: Int
    }

    struct Subscriber {
        var priority: ImageRequest.Priority
        let handler: Handler
        /// The job this subscriber is, when a job depends on another (it follows that job's priority).
        let dependent: JobID?
    }

    struct Job {
        let key: JobKey?
        var subscribers: [Int: Subscriber] = [:]
        var priority: ImageRequest.Priority
        var task: Task<Void, Never>?
        /// The highest Swift task priority of a joiner that came before `task` was attached:
        /// applied to the task when it is (see `PipelineCoordinator.start`).
        var pendingEscalation: TaskPriority?
        /// Its subscriptions to the jobs it depends on.
        var dependencies: Set<SubscriberRef> = []
        /// Its waits for a slot.
        var waits: Set<WaitRef> = []
        /// Its downloads' priorities, kept equal to its own.
        var downloads: [DownloadPriority] = []
    }

    enum Effect {
        case deliver(Handler, JobEvent<any Sendable>)
        case resume(CheckedContinuation<Bool, Never>, granted: Bool)
        case cancel(Task<Void, Never>)
    }

    let coalesces: Bool
    private(set) var jobs: [JobID: Job] = [:]
    private(set) var registry: [JobKey: JobID] = [:]
    private(set) var queues: [SlotQueue]
    private var nextJob = 0
    private var nextSubscriber = 0

    init(coalesces: Bool, queues: [SlotQueue]) {
        precondition(queues.count == Queue.allCases.count)
        self.coalesces = coalesces
        self.queues = queues
    }

    // MARK: - Jobs

    /// Adds a subscriber to the job for `key`, or to a new job (`started` true: the caller
    /// starts its task). A `dependent` job's subscriber takes that job's priority, read here,
    /// under the same lock that carries every later change.
    mutating func subscribe(
        _ key: JobKey, priority: ImageRequest.Priority, dependent: JobID?, handler: @escaping Handler,
        effects: inout [Effect]
    ) -> (ref: SubscriberRef, started: Bool) {
        let priority = dependent.flatMap { jobs[$0]?.priority } ?? priority
        let existing = coalesces ? registry[key] : nil
        let id: JobID
        if let existing {
            id = existing
        } else {
            nextJob += 1
            id = JobID(rawValue: nextJob)
            jobs[id] = Job(key: coalesces ? key : nil, priority: priority)
            if coalesces { registry[key] = id }
        }
        nextSubscriber += 1
        let ref = SubscriberRef(job: id, subscriber: nextSubscriber)
        jobs[id]?.subscribers[ref.subscriber] = Subscriber(priority: priority, handler: handler, dependent: dependent)
        if let dependent { jobs[dependent]?.dependencies.insert(ref) }
        recompute(id, effects: &effects)
        return (ref, existing == nil)
    }

    /// A priority that follows the job's from now on, for a download it makes; nil when the
    /// job is gone.
    mutating func downloadPriority(of id: JobID) -> DownloadPriority? {
        guard let job = jobs[id] else { return nil }
        let priority = DownloadPriority(job.priority)
        jobs[id]?.downloads.append(priority)
        return priority
    }

    /// The job's task, once made; false when the job was abandoned meanwhile (cancel the task).
    /// Attaches the job's task; false when the job is already gone. Returns the priority a
    /// joiner asked for before the task was there, to raise the task to.
    mutating func attach(_ task: Task<Void, Never>, to id: JobID) -> (attached: Bool, escalation: TaskPriority?) {
        guard jobs[id] != nil else { return (false, nil) }
        jobs[id]?.task = task
        return (true, jobs[id]?.pendingEscalation)
    }

    /// The job's task, to raise to `priority`; without one yet, `priority` is kept for
    /// `attach` (priorities only rise).
    mutating func taskToEscalate(_ id: JobID, to priority: TaskPriority) -> Task<Void, Never>? {
        guard let job = jobs[id] else { return nil }
        if let task = job.task { return task }
        jobs[id]?.pendingEscalation = max(job.pendingEscalation ?? priority, priority)
        return nil
    }

    mutating func setPriority(_ priority: ImageRequest.Priority, of ref: SubscriberRef, effects: inout [Effect]) {
        guard jobs[ref.job]?.subscribers[ref.subscriber] != nil else { return }
        jobs[ref.job]?.subscribers[ref.subscriber]?.priority = priority
        recompute(ref.job, effects: &effects)
    }

    /// A subscriber leaves: it gets `.cancelled` now; the last one to leave abandons the job.
    mutating func unsubscribe(_ ref: SubscriberRef, effects: inout [Effect]) {
        guard let subscriber = jobs[ref.job]?.subscribers.removeValue(forKey: ref.subscriber) else { return }
        if let dependent = subscriber.dependent { jobs[dependent]?.dependencies.remove(ref) }
        effects.append(.deliver(subscriber.handler, .finished(.failure(.cancelled))))
        if jobs[ref.job]?.subscribers.isEmpty == true {
            abandon(ref.job, effects: &effects)
        } else {
            recompute(ref.job, effects: &effects)
        }
    }

    /// The job's operation returned: every subscriber gets the result, in the order they
    /// subscribed.
    mutating func finish(_ id: JobID, with result: Result<any Sendable, ImagePipelineError>, effects: inout [Effect]) {
        guard let job = remove(id, effects: &effects) else { return }
        for (number, subscriber) in job.subscribers.sorted(by: { $0.key < $1.key }) {
            if let dependent = subscriber.dependent { jobs[dependent]?.dependencies.remove(SubscriberRef(job: id, subscriber: number)) }
            effects.append(.deliver(subscriber.handler, .finished(result)))
        }
    }

    func progressHandlers(of id: JobID) -> [Handler] {
        jobs[id]?.subscribers.values.map(\.handler) ?? []
    }

    private mutating func abandon(_ id: JobID, effects: inout [Effect]) {
        guard let job = remove(id, effects: &effects) else { return }
        if let task = job.task { effects.append(.cancel(task)) }
    }

    /// Takes the job out of the registry and the queues and leaves its dependencies.
    private mutating func remove(_ id: JobID, effects: inout [Effect]) -> Job? {
        guard let job = jobs.removeValue(forKey: id) else { return nil }
        if let key = job.key, registry[key] == id { registry[key] = nil }
        for wait in job.waits {
            let (removed, granted) = queues[wait.queue.rawValue].remove(wait.id)
            if let removed { effects.append(.resume(removed.continuation, granted: false)) }
            start(granted, in: wait.queue, effects: &effects)
        }
        for dependency in job.dependencies { unsubscribe(dependency, effects: &effects) }
        return job
    }

    /// The job's priority from its subscribers'; a change reaches its waits and its
    /// dependencies in the same step.
    private mutating func recompute(_ id: JobID, effects: inout [Effect]) {
        guard let job = jobs[id], let highest = job.subscribers.values.map(\.priority).max(), highest != job.priority else { return }
        jobs[id]?.priority = highest
        // Under the coordinator's lock, so that changes reach a download in the order they
        // were made: `update` only takes the priority's own lock and stores (URLSessionTask's
        // property), never calling back here.
        for download in job.downloads { download.update(highest) }
        for wait in job.waits {
            start(queues[wait.queue.rawValue].reprioritize(wait.id, to: highest), in: wait.queue, effects: &effects)
        }
        for dependency in job.dependencies { setPriority(highest, of: dependency, effects: &effects) }
    }

    // MARK: - Slots

    /// A slot for `id`'s work of `cost` bytes: taken at once, or a wait at the job's priority;
    /// other waiters the entry lets start are in `effects`. `.jobGone` for a job that is gone
    /// (abandoned while its operation ran).
    mutating func enter(
        _ queue: Queue, for id: JobID, cost: Int, continuation: CheckedContinuation<Bool, Never>, effects: inout [Effect]
    ) -> SlotEntry {
        guard let job = jobs[id] else { return .jobGone }
        let (waiter, granted) = queues[queue.rawValue].enter(job: id, priority: job.priority, cost: cost, continuation: continuation)
        let wait = WaitRef(queue: queue, id: waiter)
        jobs[id]?.waits.insert(wait)
        // The caller resumes its own continuation when it starts at once.
        let others = granted.filter { $0.arrival != waiter }
        start(others, in: queue, effects: &effects)
        guard others.count == granted.count else {
            jobs[id]?.waits.remove(wait)
            return .granted
        }
        return .waiting(wait)
    }

    enum SlotEntry {
        case granted, waiting(WaitRef), jobGone
    }

    /// A waiter leaves the queue without a slot (its task was cancelled); the waiters it held up
    /// start.
    mutating func leave(_ wait: WaitRef, effects: inout [Effect]) {
        let (removed, granted) = queues[wait.queue.rawValue].remove(wait.id)
        guard let removed else { return }
        jobs[removed.job]?.waits.remove(wait)
        effects.append(.resume(removed.continuation, granted: false))
        start(granted, in: wait.queue, effects: &effects)
    }

    /// A slot is given back: the waiters that fit now start.
    mutating func release(_ queue: Queue, cost: Int, effects: inout [Effect]) {
        start(queues[queue.rawValue].release(cost: cost), in: queue, effects: &effects)
    }

    /// Waiters the queue granted a slot: no longer waits of their jobs, resumed after the unlock.
    private mutating func start(_ granted: [SlotQueue.Waiter], in queue: Queue, effects: inout [Effect]) {
        for waiter in granted {
            // A waiter's id is its arrival number.
            jobs[waiter.job]?.waits.remove(WaitRef(queue: queue, id: waiter.arrival))
            effects.append(.resume(waiter.continuation, granted: true))
        }
    }
}
