import ImageCache
import Locking

/// A running image request, for callers that are not `async`: follow its progress and result,
/// change its priority, or cancel it (a reused grid cell cancels the request it no longer
/// needs).
///
/// ```swift
/// let task = pipeline.imageTask(with: request) { result in ... }
/// task.priority = .high        // the cell became visible
/// task.cancel()                // the cell was reused
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
    private var currentPriority: ImageRequest.Priority
    private var subscription: JobSubscription?
    private var outcome: Result<ImageResponse, ImagePipelineError>?
    private var waiters: [CheckedContinuation<Result<ImageResponse, ImagePipelineError>, Never>] = []
    private var cancelRequested = false

    init(request: ImageRequest, pipeline: ImagePipeline,
         completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)? = nil) {
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
        lock.withLock { self.subscription = subscription }
    }

    /// The priority of this request; raising it moves its queued work ahead.
    public var priority: ImageRequest.Priority {
        get { lock.withLock { currentPriority } }
        set {
            let subscription = lock.withLock { () -> JobSubscription? in
                currentPriority = newValue
                return self.subscription
            }
            subscription?.setPriority(newValue)
        }
    }

    /// Stops waiting for the image; the task finishes with `.cancelled` unless it already
    /// finished. Work that other requests still need goes on.
    public func cancel() {
        let subscription = lock.withLock { () -> JobSubscription? in
            guard outcome == nil else { return nil }
            cancelRequested = true
            return self.subscription
        }
        subscription?.cancel()
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
        let first = lock.withLock { () -> (waiters: [CheckedContinuation<Result<ImageResponse, ImagePipelineError>, Never>], cancelled: Bool)? in
            guard outcome == nil else { return nil }
            outcome = result
            subscription = nil
            defer { waiters.removeAll() }
            return (waiters, cancelRequested)
        }
        guard let (waiters, cancelled) = first else { return }
        switch result {
        case .failure(.cancelled) where cancelled: recorder.add(.cancelledRequests)
        case .failure: recorder.add(.failures)
        case .success: break
        }
        eventSink.yield(.finished(result))
        eventSink.finish()
        waiters.forEach { $0.resume(returning: result) }
        completion?(result)
    }
}
