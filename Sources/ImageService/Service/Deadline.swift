import Locking

/// Runs `operation` in a task of its own and returns its result, or `late` once `timeout` has
/// passed: the operation is then cancelled and not waited for, so a caller is answered at its
/// deadline even while work that checks cancellation only between steps (a decode between
/// rows) finishes its step. Cancelling the caller cancels the operation.
func withDeadline<Result: Sendable>(
    _ timeout: Duration, late: Result, _ operation: @escaping @Sendable () async -> Result
) async -> Result {
    let race = DeadlineRace<Result>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            race.start(
                continuation, work: Task { race.finish(await operation()) },
                timer: Task {
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    race.finish(late)
                })
        }
    } onCancel: {
        race.cancel()
    }
}

/// The two tasks of one `withDeadline` and the continuation the first to finish resumes.
private final class DeadlineRace<Result: Sendable>: @unchecked Sendable {
    // @unchecked: every field is read and written under `lock`.
    private let lock = Lock()
    private var continuation: CheckedContinuation<Result, Never>?
    private var tasks: [Task<Void, Never>] = []
    private var early: Result?
    private var cancelled = false

    func start(_ continuation: CheckedContinuation<Result, Never>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let (finished, cancelNow) = lock.withLock { () -> (Result?, Bool) in
            tasks = [work, timer]
            if let early { return (early, false) }
            self.continuation = continuation
            return (nil, cancelled)
        }
        if let finished {
            work.cancel()
            timer.cancel()
            continuation.resume(returning: finished)
        } else if cancelNow {
            work.cancel()
        }
    }

    /// The first result wins; the other task is cancelled.
    func finish(_ result: Result) {
        let (waiting, tasks) = lock.withLock { () -> (CheckedContinuation<Result, Never>?, [Task<Void, Never>]) in
            guard early == nil else { return (nil, []) }
            early = result
            defer { continuation = nil }
            return (continuation, self.tasks)
        }
        tasks.forEach { $0.cancel() }
        waiting?.resume(returning: result)
    }

    func cancel() {
        let tasks = lock.withLock { () -> [Task<Void, Never>] in
            cancelled = true
            return self.tasks
        }
        // The work: it answers, cancelled, for itself; the timer goes with it.
        tasks.forEach { $0.cancel() }
    }
}
