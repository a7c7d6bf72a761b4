/// What identifies a job: the same key, the same work, done once for every request that needs it.
enum JobKey: Hashable, Sendable {
    /// A job producing original bytes.
    case data(DataJobKey)
    /// A job producing a decoded image.
    case image(ImageJobKey)
}

/// A job, by its number in the coordinator.
struct JobID: Hashable, Sendable {
    let rawValue: Int
}

/// One subscriber of one job.
struct SubscriberRef: Hashable, Sendable {
    let job: JobID
    let subscriber: Int
}

/// What a shared job tells each subscriber: progress any number of times, then its result once.
enum JobEvent<Value: Sendable>: Sendable {
    case progress(received: Int, expected: Int?)
    case finished(Result<Value, ImagePipelineError>)
}

/// A running job as its operation sees it: it reports progress, waits for slots and subscribes
/// to the jobs it depends on (which then follow its priority) through it.
struct JobContext: Sendable {
    let id: JobID
    let coordinator: PipelineCoordinator

    /// Tells every subscriber how many bytes arrived.
    func reportProgress(received: Int, expected: Int?) {
        coordinator.reportProgress(of: id, received: received, expected: expected)
    }

    /// A priority for a download this job makes, following the job's (`.normal` if the job is
    /// already gone: the download is about to be cancelled).
    func downloadPriority() -> DownloadPriority {
        coordinator.downloadPriority(of: id)
    }
}

/// A subscriber's hold on a shared job.
struct JobSubscription: Sendable {
    let ref: SubscriberRef
    let coordinator: PipelineCoordinator

    /// Leaves the job (cancelling it if nobody else waits); the subscriber gets `.cancelled` at once.
    func cancel() { coordinator.cancel(ref) }

    /// Changes this subscriber's priority, and with it the job's, its queued work's and its
    /// dependencies', in one step.
    func setPriority(_ priority: ImageRequest.Priority) { coordinator.setPriority(priority, of: ref) }

    /// This subscriber's priority as the coordinator holds it; nil once it has left.
    var priority: ImageRequest.Priority? { coordinator.priority(of: ref) }
}
