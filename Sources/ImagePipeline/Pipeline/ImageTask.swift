import Dispatch
import Locking

/// A running image request, for callers that are not `async`: follow its progress and result,
/// change its priority, or cancel it (a reused grid cell cancels the request it no longer
/// needs).
///
/// ```swift
/// let task = pipeline.imageTask(with: request) { result in ... }   // runs later, on a global queue
/// task.priority = .high        // the cell became visible
/// task.cancel()                // the cell was reused: the completion gets .cancelled
/// ```
public final class ImageTask: @unchecked Sendable {
    // @unchecked: the mutable state is only touched while `lock` is held.
    /// What the task reports, in order: progress events, then exactly one `.finished`.
    public enum Event: Sendable {
        /// Bytes received so far, and the total when the server said.
        case progress(received: Int, expected: Int?)
        /// The image or the error; the last event.
        case finished(Result<ImageResponse, ImagePipelineError>)
    }

    /// The request this task loads.
    public let request: ImageRequest
    /// The events as a stream, which ends after `.finished`.
    public let events: AsyncStream<Event>
    private let eventSink: AsyncStream<Event>.Continuation
    private let completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)?
    private let recorder: StatisticsRecorder
    private let lock = Lock()
    private let subscription = PendingCancellation<JobSubscription>()
    private var currentPriority: ImageRequest.Priority
    private var outcome: Result<ImageResponse, ImagePipelineError>?
    private var waiters: [CheckedContinuation<Result<ImageResponse, ImagePipelineError>, Never>] = []

    init(
        request: ImageRequest, pipeline: ImagePipeline,
        completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)? = nil
    ) {
        self.request = request
        self.completion = completion
        recorder = pipeline.recorder
        currentPriority = request.priority
        (events, eventSink) = AsyncStream.makeStream(of: Event.self)
        if let response = pipeline.memoryResponse(for: request, decodingEncoded: false) {
            finish(.success(response))
            return
        }
        let (subscription, joined) = pipeline.imageJobs.subscribe(
            pipeline.imageJobKey(for: request), priority: request.priority,
            operation: { [pipeline] job throws(ImagePipelineError) in try await pipeline.loadImage(request, job: job) },
            handler: { [self] event in
                switch event {
                case .progress(let received, let expected): eventSink.yield(.progress(received: received, expected: expected))
                case .finished(let result): finish(result)
                }
            })
        if joined { recorder.add(.coalescedRequests) }
        // A cancel() that came while subscribing (from another thread) was kept: honour it now.
        if !self.subscription.attach(subscription) { subscription.cancel() }
    }

    /// The priority of this request; raising it moves its queued work ahead.
    public var priority: ImageRequest.Priority {
        get { lock.withLock { currentPriority } }
        set {
            lock.withLock { currentPriority = newValue }
            subscription.withAttached { $0.setPriority(newValue) }
        }
    }

    /// Stops waiting for the image; the task finishes with `.cancelled` unless it already
    /// finished. Work that other requests still need goes on.
    public func cancel() {
        guard lock.withLock({ outcome == nil }) else { return }
        subscription.cancel()?.cancel()
    }

    /// The result once there is one, without throwing.
    public var result: Result<ImageResponse, ImagePipelineError>? { lock.withLock { outcome } }

    /// The image, waiting for it if needed.
    public var response: ImageResponse {
        get async throws(ImagePipelineError) { try await result().get() }
    }

    /// Waits for the result.
    func result() async -> Result<ImageResponse, ImagePipelineError> {
        await withCheckedContinuation { continuation in
            let finished = lock.withLock { () -> Result<ImageResponse, ImagePipelineError>? in
                if outcome == nil { waiters.append(continuation) }
                return outcome
            }
            if let finished { continuation.resume(returning: finished) }
        }
    }

    private func finish(_ result: Result<ImageResponse, ImagePipelineError>) {
        let waiters = lock.withLock { () -> [CheckedContinuation<Result<ImageResponse, ImagePipelineError>, Never>]? in
            guard outcome == nil else { return nil }
            outcome = result
            defer { self.waiters.removeAll() }
            return self.waiters
        }
        guard let waiters else { return }
        subscription.detach()
        switch result {
        case .failure(.cancelled) where subscription.isCancelled: recorder.add(.cancelledRequests)
        case .failure: recorder.add(.failures)
        case .success: break
        }
        eventSink.yield(.finished(result))
        eventSink.finish()
        waiters.forEach { $0.resume(returning: result) }
        // Never on the caller's stack: a completion run inside imageTask(with:) (a memory hit)
        // or inside cancel() would see a handle its caller does not hold yet, or re-enter it.
        if let completion { DispatchQueue.global().async { completion(result) } }
    }
}

extension PendingCancellation {
    /// Runs `body` on the attached handle, if there is one and it was not cancelled.
    func withAttached(_ body: (Handle) -> Void) {
        if let handle = currentHandle { body(handle) }
    }
}
