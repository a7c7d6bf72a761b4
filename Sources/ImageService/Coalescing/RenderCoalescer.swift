import Locking

/// Identical renders in flight run once: the first request for a key starts the work, later
/// ones wait for its result. A waiter that is cancelled leaves at once with `.cancelled`; when
/// the last one leaves, the work itself is cancelled (its admission wait, its fetch).
///
/// The pipeline coalesces source fetches (one download for every size of an image); this does
/// the same one level up, for a whole decode + encode, with the service's own error type.
final class RenderCoalescer<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `entries` is only touched while `lock` is held.
    typealias Continuation = CheckedContinuation<Result<Value, ServiceError>, Never>

    private final class Entry: @unchecked Sendable {
        // @unchecked: the coalescer's lock guards every field.
        var waiters: [Int: Continuation] = [:]
        var task: Task<Void, Never>?
    }

    private let lock = Lock()
    private var entries: [String: Entry] = [:]
    private var nextWaiter = 0

    /// The result of the work for `key`, joining the work in flight if there is one (`onJoin`
    /// is then called); `work` runs in a task of its own otherwise.
    func result(
        for key: String, onJoin: @Sendable () -> Void = {},
        work: @escaping @Sendable () async -> Result<Value, ServiceError>
    ) async -> Result<Value, ServiceError> {
        let id = lock.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        let cancelled = CancellationFlag()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let (entry, started) = lock.withLock { () -> (Entry?, Bool) in
                    if cancelled.isSet { return (nil, false) }
                    if let existing = entries[key] {
                        existing.waiters[id] = continuation
                        return (existing, false)
                    }
                    let entry = Entry()
                    entry.waiters[id] = continuation
                    entries[key] = entry
                    return (entry, true)
                }
                guard let entry else { return continuation.resume(returning: .failure(.cancelled)) }
                if started {
                    let task = Task { [self] in finish(key, entry, with: await work()) }
                    // Its last waiter may have left before the task existed to be cancelled.
                    let abandoned = lock.withLock { () -> Bool in
                        entry.task = task
                        return entries[key] !== entry
                    }
                    if abandoned { task.cancel() }
                } else {
                    onJoin()
                }
            }
        } onCancel: {
            leave(key, id, cancelled)
        }
    }

    /// Keys with work in flight.
    var count: Int { lock.withLock { entries.count } }

    private func finish(_ key: String, _ entry: Entry, with result: Result<Value, ServiceError>) {
        let waiters = lock.withLock { () -> [Continuation] in
            if entries[key] === entry { entries[key] = nil }
            defer { entry.waiters.removeAll() }
            return Array(entry.waiters.values)
        }
        waiters.forEach { $0.resume(returning: result) }
    }

    private func leave(_ key: String, _ id: Int, _ flag: CancellationFlag) {
        let (continuation, abandoned) = lock.withLock { () -> (Continuation?, Task<Void, Never>?) in
            flag.set()
            guard let entry = entries[key], let continuation = entry.waiters.removeValue(forKey: id) else { return (nil, nil) }
            guard entry.waiters.isEmpty else { return (continuation, nil) }
            entries[key] = nil
            return (continuation, entry.task)
        }
        abandoned?.cancel()
        continuation?.resume(returning: .failure(.cancelled))
    }
}

/// Set once by a cancellation handler that may run before the waiter it cancels is registered;
/// read and written under the coalescer's lock.
private final class CancellationFlag: @unchecked Sendable {
    private(set) var isSet = false
    func set() { isSet = true }
}
