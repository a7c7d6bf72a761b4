import ImageCodec
import Locking

/// Admits CPU work (decode + encode) into a fixed number of worker slots, first come first
/// served, each with the memory its plan says it needs.
///
/// - A render is admitted once a worker is free *and* its bytes fit in the memory budget; they
///   are prepaid into its request's `MemoryLedger` as it is admitted, so a render in a slot
///   never waits for memory, and every buffer it makes draws on them.
/// - A render that does not fit waits its turn in the queue. Memory given back anywhere — a
///   render ending, an answer written, a source dropped — admits whoever fits next.
/// - With no render running, the head of the queue may wait for memory others hold (answers
///   being written, downloads) for at most `memoryWait`; then it alone is refused
///   (`.memoryFull`, answered 429) and the next one gets the same wait. A budget held by the
///   queue's own sources is shed one request at a time, oldest first, never all at once.
/// - At most `queueLimit` wait; one more is refused at once (`.queueFull`, answered 429) rather
///   than left to time out.
/// - A waiter whose task is cancelled (its client disconnected, its deadline passed) leaves the
///   queue at once, and whoever it held back is admitted.
///
/// The service asks for a slot only once the source bytes are in: a slow origin holds a
/// connection, never a worker.
final class CPUAdmission: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    enum Refusal: Error, Equatable {
        case queueFull
        /// The render's bytes did not fit beside what is held, and none came free within the
        /// wait while no render ran.
        case memoryFull
        case cancelled
    }

    /// What is running and waiting now.
    struct Snapshot: Sendable, Equatable {
        var busy: Int
        var waiting: Int
    }

    private typealias Continuation = CheckedContinuation<Result<Void, Refusal>, Never>

    private struct Waiter {
        let id: Int
        let ledger: MemoryLedger
        let bytes: Int
        let continuation: Continuation
    }

    /// A waiter's answer, given once the lock is released.
    private typealias Answer = (continuation: Continuation, result: Result<Void, Refusal>)

    let workers: Int
    let queueLimit: Int
    /// The budget the ledgers draw on: its releases wake the queue.
    let memory: MemoryBudget
    /// How long the head may wait for memory while no render runs.
    let memoryWait: Duration
    private let lock = Lock()
    private var busy = 0
    private var waiting: [Waiter] = []
    /// Ids that asked and have not yet queued or been admitted, and those of them cancelled.
    private var asking: Set<Int> = []
    private var cancelledEarly: Set<Int> = []
    private var nextID = 0
    /// The head waiting for memory with no render running, and since when.
    private var stuck: (id: Int, since: ContinuousClock.Instant)?
    /// Told after every change, with the lock held (the metrics' gauges: never stale).
    private let onChange: @Sendable (Snapshot) -> Void

    init(
        workers: Int, queueLimit: Int, memory: MemoryBudget = MemoryBudget(capacity: .max), memoryWait: Duration = .seconds(1),
        onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }
    ) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.memory = memory
        self.memoryWait = memoryWait
        self.onChange = onChange
        memory.observeReleases { [weak self] in self?.memoryFreed() }
    }

    /// Waits for a slot with `bytes` prepaid into `ledger`; call `release(_:)` with the same
    /// ledger when done.
    func admit(_ ledger: MemoryLedger, reserving bytes: Int = 0) async throws(Refusal) {
        let id = lock.withLock { () -> Int in
            nextID += 1
            asking.insert(nextID)
            return nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let (immediate, timer) = lock.withLock { () -> (Result<Void, Refusal>?, Duration?) in
                    defer { onChange(snapshotLocked) }
                    asking.remove(id)
                    if cancelledEarly.remove(id) != nil { return (.failure(.cancelled), nil) }
                    if waiting.isEmpty, busy < workers, ledger.prepay(bytes) {
                        busy += 1
                        return (.success(()), nil)
                    }
                    if waiting.count >= queueLimit { return (.failure(.queueFull), nil) }
                    waiting.append(Waiter(id: id, ledger: ledger, bytes: bytes, continuation: continuation))
                    return (nil, markStuckLocked())
                }
                if let immediate { continuation.resume(returning: immediate) }
                if let timer { startTimer(timer) }
            }
        } onCancel: {
            cancel(id)
        }
        try result.get()
    }

    /// Gives back a slot and settles `ledger`'s prepayment (what its buffers did not draw goes
    /// back to the budget, which wakes the queue).
    func release(_ ledger: MemoryLedger) {
        lock.withLock {
            busy -= 1
            onChange(snapshotLocked)
        }
        ledger.settle()
        // A settle that returned nothing wakes no one: the freed slot must.
        memoryFreed()
    }

    /// Memory came back, or a slot: admits whoever fits now.
    private func memoryFreed() {
        let (answers, timer) = lock.withLock { () -> ([Answer], Duration?) in
            defer { onChange(snapshotLocked) }
            let answers = grantLocked()
            return (answers, markStuckLocked())
        }
        answers.forEach { $0.continuation.resume(returning: $0.result) }
        if let timer { startTimer(timer) }
    }

    /// Admits waiters in arrival order while a worker is free and the head's bytes fit (lock
    /// held).
    private func grantLocked() -> [Answer] {
        var answers: [Answer] = []
        while let head = waiting.first, busy < workers, head.ledger.prepay(head.bytes) {
            busy += 1
            answers.append((waiting.removeFirst().continuation, .success(())))
        }
        if let stuck, waiting.first?.id != stuck.id || busy > 0 { self.stuck = nil }
        return answers
    }

    /// When the head cannot be admitted and no render runs (so no render's end will admit it),
    /// starts its wait for memory; returns how long a timer should wait (lock held).
    private func markStuckLocked() -> Duration? {
        guard busy == 0, let head = waiting.first, stuck?.id != head.id else { return nil }
        stuck = (head.id, .now)
        return memoryWait
    }

    private func startTimer(_ wait: Duration) {
        Task { [weak self] in
            try? await Task.sleep(for: wait)
            self?.waitedForMemory()
        }
    }

    /// A stuck head's wait may be over: refuses it (alone) if it still cannot be admitted, and
    /// starts the next head's wait.
    private func waitedForMemory() {
        let (answers, timer) = lock.withLock { () -> ([Answer], Duration?) in
            defer { onChange(snapshotLocked) }
            var answers = grantLocked()
            if let stuck, busy == 0, waiting.first?.id == stuck.id, ContinuousClock.now - stuck.since >= memoryWait {
                answers.append((waiting.removeFirst().continuation, .failure(.memoryFull)))
                self.stuck = nil
                answers += grantLocked()
            }
            return (answers, markStuckLocked())
        }
        answers.forEach { $0.continuation.resume(returning: $0.result) }
        if let timer { startTimer(timer) }
    }

    /// True while the queue is full: the next request would be refused.
    var isSaturated: Bool { lock.withLock { waiting.count >= queueLimit && (busy >= workers || queueLimit > 0) } }

    /// What is running and waiting now.
    var snapshot: Snapshot { lock.withLock { snapshotLocked } }

    private var snapshotLocked: Snapshot { Snapshot(busy: busy, waiting: waiting.count) }

    private func cancel(_ id: Int) {
        let (answers, timer) = lock.withLock { () -> ([Answer], Duration?) in
            guard let index = waiting.firstIndex(where: { $0.id == id }) else {
                if asking.contains(id) { cancelledEarly.insert(id) }
                return ([], nil)
            }
            defer { onChange(snapshotLocked) }
            // A head that did not fit may have held back one behind it that does.
            let answers = [(waiting.remove(at: index).continuation, Result<Void, Refusal>.failure(.cancelled))] + grantLocked()
            return (answers, markStuckLocked())
        }
        answers.forEach { $0.continuation.resume(returning: $0.result) }
        if let timer { startTimer(timer) }
    }
}
