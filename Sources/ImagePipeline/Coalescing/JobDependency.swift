import ImageCache
import Locking

extension JobRegistry {
    /// Subscribes to the job for `key` (starting it with `operation` if none runs) and waits for
    /// its result. The subscription follows the priority `observe` reports (a parent job's),
    /// forwards progress, and is left when the calling task is cancelled. `onJoin` runs when an
    /// existing job was joined.
    func result(for key: Key, priority: ImageRequest.Priority,
                following observe: ((@escaping @Sendable (ImageRequest.Priority) -> Void) -> Void)? = nil,
                operation: @escaping SharedJob<Value>.Operation,
                progress: (@Sendable (Int, Int?) -> Void)? = nil,
                onJoin: @Sendable () -> Void = {}) async -> Result<Value, ImagePipelineError> {
        let holder = SubscriptionHolder()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ImagePipelineError>, Never>) in
                let (subscription, joined) = subscribe(key, priority: priority, operation: operation) { event in
                    switch event {
                    case .progress(let received, let expected): progress?(received, expected)
                    case .finished(let result): continuation.resume(returning: result)
                    }
                }
                if joined { onJoin() }
                observe? { subscription.setPriority($0) }
                holder.hold(subscription)
            }
        } onCancel: {
            holder.cancel()
        }
    }
}

/// The subscription of a waiting task, so its cancellation handler can leave the job even when
/// the cancellation arrives before the subscription exists.
final class SubscriptionHolder: @unchecked Sendable {
    // @unchecked: state only under `lock`.
    private let lock = Lock()
    private var subscription: JobSubscription?
    private var cancelled = false

    func hold(_ subscription: JobSubscription) {
        let cancelNow = lock.withLock { () -> Bool in
            self.subscription = subscription
            return cancelled
        }
        if cancelNow { subscription.cancel() }
    }

    func cancel() {
        let subscription = lock.withLock { () -> JobSubscription? in
            cancelled = true
            return self.subscription
        }
        subscription?.cancel()
    }
}
