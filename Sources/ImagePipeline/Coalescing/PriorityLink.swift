import Locking

/// Carries a parent job's priority to its subscription to a dependency (an image job's to the
/// download it waits for), in order, including every change made while the subscription was
/// still being created: the latest value is kept and replayed when the subscription attaches.
final class PriorityLink: @unchecked Sendable {
    // @unchecked: the state is only touched under `lock`.
    private let lock = Lock()
    private var latest: ImageRequest.Priority
    private var subscription: JobSubscription?

    init(_ priority: ImageRequest.Priority) {
        latest = priority
    }

    /// The priority now.
    var priority: ImageRequest.Priority { lock.withLock { latest } }

    /// A new priority, forwarded to the subscription if it exists.
    func update(_ priority: ImageRequest.Priority) {
        let subscription = lock.withLock { () -> JobSubscription? in
            latest = priority
            return self.subscription
        }
        subscription?.setPriority(priority)
    }

    /// The subscription exists now: it gets the latest priority.
    func attach(_ subscription: JobSubscription) {
        let priority = lock.withLock { () -> ImageRequest.Priority in
            self.subscription = subscription
            return latest
        }
        subscription.setPriority(priority)
    }
}
