import Locking

/// Admits CPU work (decode + encode) into a fixed number of worker slots, first come first
/// served.
///
/// - At most `queueLimit` wait; one more is refused at once (`.queueFull`, answered 429) rather
///   than left to time out.
/// - A waiter whose task is cancelled (its client disconnected) leaves the queue at once.
///
/// The service asks for a slot only once the source bytes are in and its decode's planned
/// memory is reserved in the memory budget: a slow origin holds a connection, never a worker,
/// and a render in a slot never waits for memory.
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
    }

    private typealias Continuation = CheckedContinuation<Result<Void, Refusal>, Never>

    private struct Waiter {
        let id: Int
        let continuation: Continuation
    }

    let workers: Int
    let queueLimit: Int
    private let lock = Lock()
    private var busy = 0
    private var waiting: [Waiter] = []
    /// Ids that asked and have not yet queued or been admitted, and those of them cancelled.
    private var asking: Set<Int> = []
    private var cancelledEarly: Set<Int> = []
    private var nextID = 0
    /// Told after every change, with the lock held (the metrics' gauges: never stale).
    private let onChange: @Sendable (Snapshot) -> Void

    init(workers: Int, queueLimit: Int, onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.onChange = onChange
    }

    /// Waits for a slot; call `release()` when done.
    func admit() async throws(Refusal) {
        let id = lock.withLock { () -> Int in
            nextID += 1
            asking.insert(nextID)
            return nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let immediate = lock.withLock { () -> Result<Void, Refusal>? in
                    defer { onChange(snapshotLocked) }
                    asking.remove(id)
                    if cancelledEarly.remove(id) != nil { return .failure(.cancelled) }
                    if waiting.isEmpty, busy < workers {
                        busy += 1
                        return .success(())
                    }
                    if waiting.count >= queueLimit { return .failure(.queueFull) }
                    waiting.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            cancel(id)
        }
        try result.get()
    }

    /// Gives back a slot, and admits the next waiter.
    func release() {
        let granted = lock.withLock { () -> Continuation? in
            defer { onChange(snapshotLocked) }
            guard !waiting.isEmpty else {
                busy -= 1
                return nil
            }
            // The slot passes straight to the next in line.
            return waiting.removeFirst().continuation
        }
        granted?.resume(returning: .success(()))
    }

    /// True while the queue is full: the next request would be refused.
    var isSaturated: Bool { lock.withLock { waiting.count >= queueLimit && busy >= workers } }

    /// What is running and waiting now.
    var snapshot: Snapshot { lock.withLock { snapshotLocked } }

    private var snapshotLocked: Snapshot { Snapshot(busy: busy, waiting: waiting.count) }

    private func cancel(_ id: Int) {
        let cancelled = lock.withLock { () -> Continuation? in
            guard let index = waiting.firstIndex(where: { $0.id == id }) else {
                if asking.contains(id) { cancelledEarly.insert(id) }
                return nil
            }
            defer { onChange(snapshotLocked) }
            return waiting.remove(at: index).continuation
        }
        cancelled?.resume(returning: .failure(.cancelled))
    }
}
