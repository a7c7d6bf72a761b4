import Locking

/// Admits source downloads: at most `maximum` at once, at most `perHost` to one host, and at most
/// `queueLimit` waiting beyond those; one more is refused at once (`.queueFull`, answered 429).
///
/// A waiter is admitted as soon as a slot is free for its host, in arrival order among those
/// that can run: 80 downloads stuck on one slow host hold that host's slots and queue behind
/// them, and a download from another host passes them by. A waiter whose task is cancelled
/// leaves the queue at once.
final class DownloadAdmission: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    enum Refusal: Error, Equatable {
        case queueFull
        case cancelled
    }

    /// Downloads running and waiting now.
    struct Snapshot: Sendable, Equatable {
        var running: Int
        var waiting: Int
    }

    private typealias Continuation = CheckedContinuation<Result<Void, Refusal>, Never>

    private struct Waiter {
        let id: Int
        let host: String
        let continuation: Continuation
    }

    let maximum: Int
    let perHost: Int
    let queueLimit: Int
    private let lock = Lock()
    private var running = 0
    private var runningByHost: [String: Int] = [:]
    private var waiting: [Waiter] = []
    /// Ids that asked and have not yet queued or been admitted.
    private var asking: Set<Int> = []
    /// Of those, the ones cancelled meanwhile.
    private var cancelledEarly: Set<Int> = []
    private var nextID = 0
    /// Told after every change, with the lock held (the metrics' gauges: never stale).
    private let onChange: @Sendable (Snapshot) -> Void

    init(maximum: Int, perHost: Int, queueLimit: Int, onChange: @escaping @Sendable (Snapshot) -> Void = { _ in }) {
        self.maximum = max(1, maximum)
        self.perHost = max(1, perHost)
        self.queueLimit = max(0, queueLimit)
        self.onChange = onChange
    }

    /// Waits for a slot for `host`; call `release(host:)` when the download is over.
    func admit(host: String) async throws(Refusal) {
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
                    if fits(host) {
                        take(host)
                        return .success(())
                    }
                    if waiting.count >= queueLimit { return .failure(.queueFull) }
                    waiting.append(Waiter(id: id, host: host, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            cancel(id)
        }
        try result.get()
    }

    /// Gives back `host`'s slot and admits whoever can run now.
    func release(host: String) {
        let granted = lock.withLock { () -> [Continuation] in
            running -= 1
            runningByHost[host, default: 1] -= 1
            if runningByHost[host] == 0 { runningByHost[host] = nil }
            defer { onChange(snapshotLocked) }
            return grantLocked()
        }
        granted.forEach { $0.resume(returning: .success(())) }
    }

    /// True while the queue is full (with no queue: while every slot is taken): the next
    /// download that cannot start at once is refused.
    var isSaturated: Bool { lock.withLock { queueLimit > 0 ? waiting.count >= queueLimit : running >= maximum } }

    /// What runs and waits now.
    var snapshot: Snapshot { lock.withLock { snapshotLocked } }

    private var snapshotLocked: Snapshot { Snapshot(running: running, waiting: waiting.count) }

    private func fits(_ host: String) -> Bool { running < maximum && runningByHost[host, default: 0] < perHost }

    private func take(_ host: String) {
        running += 1
        runningByHost[host, default: 0] += 1
    }

    /// Admits, in arrival order, every waiter whose host has a free slot (lock held).
    private func grantLocked() -> [Continuation] {
        var granted: [Continuation] = []
        var index = 0
        while index < waiting.count, running < maximum {
            if fits(waiting[index].host) {
                let waiter = waiting.remove(at: index)
                take(waiter.host)
                granted.append(waiter.continuation)
            } else {
                index += 1
            }
        }
        return granted
    }

    private func cancel(_ id: Int) {
        let cancelled = lock.withLock { () -> Continuation? in
            guard let index = waiting.firstIndex(where: { $0.id == id }) else {
                // Not queued yet: `admit` refuses it when it gets there. Admitted already: the
                // download itself sees the cancellation.
                if asking.contains(id) { cancelledEarly.insert(id) }
                return nil
            }
            defer { onChange(snapshotLocked) }
            return waiting.remove(at: index).continuation
        }
        cancelled?.resume(returning: .failure(.cancelled))
    }
}
