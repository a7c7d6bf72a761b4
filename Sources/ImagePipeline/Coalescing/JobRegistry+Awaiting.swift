extension JobRegistry {
    /// Subscribes to the job for `key` (starting it with `operation` if none runs) and waits for
    /// its result. The subscription follows `link`'s priority (a fixed one, or a parent job's
    /// with every change in order), forwards progress, and is left when the calling task is
    /// cancelled. `onJoin` runs when an existing job was joined.
    func result(
        for key: Key, following link: PriorityLink, operation: @escaping SharedJob<Value>.Operation,
        progress: @escaping @Sendable (Int, Int?) -> Void, onJoin: @Sendable () -> Void
    ) async -> Result<Value, ImagePipelineError> {
        let pending = PendingCancellation<JobSubscription>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ImagePipelineError>, Never>) in
                let (subscription, joined) = subscribe(key, priority: link.priority, operation: operation) { event in
                    switch event {
                    case .progress(let received, let expected): progress(received, expected)
                    case .finished(let result): continuation.resume(returning: result)
                    }
                }
                if joined { onJoin() }
                link.attach(subscription)
                if !pending.attach(subscription) { subscription.cancel() }
            }
        } onCancel: {
            pending.cancel()?.cancel()
        }
    }
}

extension SharedJob {
    /// A link that carries this job's priority, now and after every change, to a dependency.
    func priorityLink() -> PriorityLink {
        let link = PriorityLink(priority)
        observePriority { link.update($0) }
        return link
    }
}
