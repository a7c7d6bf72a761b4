import Locking

/// Admits CPU work (decode + encode) into a fixed number of worker slots, first come first
/// served, within a memory budget.
///
/// - Work is admitted only when a slot is free and its planned memory fits beside what is
///   running; work that alone exceeds the budget still runs when nothing else does, so no
///   request waits forever.
/// - At most `queueLimit` wait; one more is refused at once (`.queueFull`, answered 429) rather
///   than left to time out.
/// - A waiter whose task is cancelled (its client disconnected) leaves the queue at once.
///
/// The service asks for admission only once the source bytes are in: a slow origin holds a
/// connection, never a worker.
final class CPUAdmission: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    enum Refusal: Error, Equatable {
        case queueFull
        case cancelled
    }

    /// What is running and waiting now.
    struct Snapshot: Sendable, Equatable {
        var busy: Int
        var waiting: Int
        var memoryInUse: Int
    }

    private typealias Continuation = CheckedContinuation<Result<Void, Refusal>, Never>

    private struct Waiter {
        let id: Int
        let memory: Int
        let continuation: Continuation
    }

    private enum State {
        /// Asked, not yet queued.
        case asking
        /// Cancelled before it could queue.
        case cancelled
        case queued
    }

    let workers: Int
    let queueLimit: Int
    let memoryBudget: Int
    private let lock = Lock()
    private var busy = 0
    private var memoryInUse = 0
    private var waiting: [Waiter] = []
    private var states: [Int: State] = [:]
    private var nextID = 0
    /// Told after every change, outside the lock (the metrics' gauges).
    private let onChange: @Sendable (Snapshot) -> Void

    init(workers: Int, queueLimit: Int, memoryBudget: Int, onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.memoryBudget = memoryBudget
        self.onChange = onChange
    }

    /// Waits for a slot with `memory` bytes of the budget; call `release(memory:)` when done.
    func admit(memory: Int) async throws(Refusal) {
        let id = lock.withLock { () -> Int in
            nextID += 1
            states[nextID] = .asking
            return nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let (immediate, snapshot) = lock.withLock { () -> (Result<Void, Refusal>?, Snapshot) in
                    let outcome: Result<Void, Refusal>?
                    if states[id] == .cancelled {
                        outcome = .failure(.cancelled)
                    } else if waiting.isEmpty, fits(memory) {
                        busy += 1
                        memoryInUse += memory
                        outcome = .success(())
                    } else if waiting.count >= queueLimit {
                        outcome = .failure(.queueFull)
                    } else {
                        waiting.append(Waiter(id: id, memory: memory, continuation: continuation))
                        states[id] = .queued
                        outcome = nil
                    }
                    if outcome != nil { states[id] = nil }
                    return (outcome, snapshotLocked)
                }
                if let immediate { continuation.resume(returning: immediate) }
                onChange(snapshot)
            }
        } onCancel: {
            cancel(id)
        }
        try result.get()
    }

    /// Gives back a slot and its memory, and admits whoever now fits.
    func release(memory: Int) {
        let (granted, snapshot) = lock.withLock { () -> ([Continuation], Snapshot) in
            busy -= 1
            memoryInUse -= memory
            return (grantLocked(), snapshotLocked)
        }
        granted.forEach { $0.resume(returning: .success(())) }
        onChange(snapshot)
    }

    /// True while the queue is full: the next request would be refused.
    var isSaturated: Bool { lock.withLock { waiting.count >= queueLimit && !(waiting.isEmpty && busy < workers) } }

    /// What is running and waiting now.
    var snapshot: Snapshot { lock.withLock { snapshotLocked } }

    private var snapshotLocked: Snapshot { Snapshot(busy: busy, waiting: waiting.count, memoryInUse: memoryInUse) }

    private func fits(_ memory: Int) -> Bool {
        busy < workers && (busy == 0 || memoryInUse + memory <= memoryBudget)
    }

    /// Admits waiters from the front while they fit (call with `lock` held); strictly in order,
    /// so a large decode at the front is not overtaken for ever by small ones.
    private func grantLocked() -> [Continuation] {
        var granted: [Continuation] = []
        while let head = waiting.first, fits(head.memory) {
            waiting.removeFirst()
            states[head.id] = nil
            busy += 1
            memoryInUse += head.memory
            granted.append(head.continuation)
        }
        return granted
    }

    private func cancel(_ id: Int) {
        let (cancelled, granted, snapshot) = lock.withLock { () -> (Continuation?, [Continuation], Snapshot) in
            switch states[id] {
            case .asking:
                states[id] = .cancelled
                return (nil, [], snapshotLocked)
            case .queued:
                states[id] = nil
                guard let index = waiting.firstIndex(where: { $0.id == id }) else { return (nil, [], snapshotLocked) }
                let waiter = waiting.remove(at: index)
                // The one that left may have been holding the front back.
                return (waiter.continuation, grantLocked(), snapshotLocked)
            case .cancelled, nil:
                return (nil, [], snapshotLocked)
            }
        }
        cancelled?.resume(returning: .failure(.cancelled))
        granted.forEach { $0.resume(returning: .success(())) }
        if cancelled != nil { onChange(snapshot) }
    }
}
