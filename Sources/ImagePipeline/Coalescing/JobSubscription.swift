/// A subscriber's hold on a shared job.
struct JobSubscription: Sendable {
    /// Leaves the job (cancelling it if nobody else waits); the subscriber gets `.cancelled`.
    let cancel: @Sendable () -> Void
    /// Changes this subscriber's priority, and so possibly the job's.
    let setPriority: @Sendable (ImageRequest.Priority) -> Void
}
