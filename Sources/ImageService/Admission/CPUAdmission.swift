import ImageCodec
import Locking

/// Admits CPU work (decode + encode) into a fixed number of worker slots, first come first
/// served, each with the memory its plan says it needs.
///
/// - A render is admitted once a worker is free *and* its bytes fit in the memory budget; it
///   reserves them as it is admitted, so a render in a slot never waits for memory.
/// - A render that does not fit waits its turn in the queue while renders run: each that ends
///   gives its memory back and admits whoever fits next. With none running, nothing this queue
///   admits would free memory for it (what holds the budget then is sources, held by their
///   requests — some of them waiting here), so it is refused at once (`.memoryFull`).
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
        /// The render's bytes do not fit beside what is held, and no render runs that would free
        /// any.
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
        let bytes: Int
        let continuation: Continuation
    }

    /// A waiter's answer, given once the lock is released.
    private typealias Answer = (continuation: Continuation, result: Result<Void, Refusal>)

    let workers: Int
    let queueLimit: Int
    /// Where a render's bytes are reserved as it is admitted (lock order: this admission's lock,
    /// then the budget's).
    let memory: MemoryBudget
    private let lock = Lock()
    private var busy = 0
    private var waiting: [Waiter] = []
    /// Ids that asked and have not yet queued or been admitted, and those of them cancelled.
    private var asking: Set<Int> = []
    private var cancelledEarly: Set<Int> = []
    private var nextID = 0
    /// Told after every change, with the lock held (the metrics' gauges: never stale).
    private let onChange: @Sendable (Snapshot) -> Void

    init(
        workers: Int, queueLimit: Int, memory: MemoryBudget = MemoryBudget(capacity: .max),
        onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }
    ) {
        self.workers = max(1, workers)
        self.queueLimit = max(0, queueLimit)
        self.memory = memory
        self.onChange = onChange
    }

    /// Waits for a slot with `bytes` reserved in the memory budget; call `release(reserved:)`
    /// with the same bytes when done.
    func admit(reserving bytes: Int = 0) async throws(Refusal) {
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
                        if memory.reserve(bytes) {
                            busy += 1
                            return .success(())
                        }
                        if busy == 0 { return .failure(.memoryFull) }
                    }
                    if waiting.count >= queueLimit { return .failure(.queueFull) }
                    waiting.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            cancel(id)
        }
        try result.get()
    }

    /// Gives back a slot and the `bytes` admitted with it, and admits whoever fits next.
    func release(reserved bytes: Int = 0) {
        let answers = lock.withLock { () -> [Answer] in
            defer { onChange(snapshotLocked) }
            busy -= 1
            memory.release(bytes)
            return grantLocked()
        }
        answers.forEach { $0.continuation.resume(returning: $0.result) }
    }

    /// Admits waiters in arrival order while a worker is free and the head's bytes fit; with no
    /// render running, a head that does not fit is refused (nothing here would ever free memory
    /// for it) and the next one tried (lock held).
    private func grantLocked() -> [Answer] {
        var answers: [Answer] = []
        while let head = waiting.first, busy < workers {
            if memory.reserve(head.bytes) {
                busy += 1
                answers.append((waiting.removeFirst().continuation, .success(())))
            } else if busy == 0 {
                answers.append((waiting.removeFirst().continuation, .failure(.memoryFull)))
            } else {
                break
            }
        }
        return answers
    }

    /// True while the queue is full: the next request would be refused.
    var isSaturated: Bool { lock.withLock { waiting.count >= queueLimit && (busy >= workers || queueLimit > 0) } }

    /// What is running and waiting now.
    var snapshot: Snapshot { lock.withLock { snapshotLocked } }

    private var snapshotLocked: Snapshot { Snapshot(busy: busy, waiting: waiting.count) }

    private func cancel(_ id: Int) {
        let answers = lock.withLock { () -> [Answer] in
            guard let index = waiting.firstIndex(where: { $0.id == id }) else {
                if asking.contains(id) { cancelledEarly.insert(id) }
                return []
            }
            defer { onChange(snapshotLocked) }
            // A head that did not fit may have held back one behind it that does.
            return [(waiting.remove(at: index).continuation, .failure(.cancelled))] + grantLocked()
        }
        answers.forEach { $0.continuation.resume(returning: $0.result) }
    }
}
