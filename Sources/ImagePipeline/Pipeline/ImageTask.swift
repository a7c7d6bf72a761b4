import Dispatch
import Locking

/// A running image request, for callers that are not `async`: follow its progress and result,
/// change its priority, or cancel it (a reused grid cell cancels the request it no longer
/// needs).
///
/// A task that is cancelled before its result was delivered finishes with `.cancelled`, even
/// when the image was already there (a memory hit): the completion, `events` and `response`
/// never hand a cancelled caller an image.
///
/// ```swift
/// let task = pipeline.imageTask(with: request) { result in ... }   // runs later, on the callback queue
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
    private let completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)?
    private let recorder: StatisticsRecorder
    private let callbackQueue: DispatchQueue
    private let lock = Lock()
    private var subscription: JobSubscription?
    /// The priority before the task subscribed and after it finished (a memory hit has none).
    private var currentPriority: ImageRequest.Priority
    private var cancelled = false
    /// The result; a success becomes `.cancelled` if `cancel()` comes before it is delivered.
    private var outcome: Result<ImageResponse, ImagePipelineError>?
    private var delivered = false
    private var waiters: [CheckedContinuation<Result<ImageResponse, ImagePipelineError>, Never>] = []
    /// Made on first use of `events`: a task nobody follows keeps no stream.
    private var eventSink: AsyncStream<Event>.Continuation?
    private var eventStream: AsyncStream<Event>?

    /// Whether `events` has been asked for (for tests: nobody's stream is made for them).
    var hasEventStream: Bool { lock.withLock { eventStream != nil } }

    init(
        request: ImageRequest, pipeline: ImagePipeline,
        completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)? = nil
    ) {
        self.request = request
        self.completion = completion
        recorder = pipeline.recorder
        callbackQueue = pipeline.configuration.callbackQueue
        currentPriority = request.priority
        if let response = pipeline.memoryResponse(for: request, decodingEncoded: false) {
            finish(.success(response))
            return
        }
        let (subscription, joined) = pipeline.coordinator.subscribe(pipeline.imageJob(for: request), priority: request.priority) {
            [self] event in
            switch event {
            case .progress(let received, let expected): yield(.progress(received: received, expected: expected))
            case .finished(let result): finish(result)
            }
        }
        if joined { recorder.add(.coalescedRequests) }
        lock.withLock { self.subscription = subscription }
    }

    /// The priority of this request; raising it moves its queued work ahead at once.
    ///
    /// One copy: while the task runs, the coordinator's subscriber entry holds it, changed under
    /// the task's lock so that concurrent setters leave the task and its job agreeing (the
    /// last setter wins in both). Lock order: the task's, then the coordinator's, which calls
    /// no handler for a priority change.
    public var priority: ImageRequest.Priority {
        get { lock.withLock { subscription?.priority ?? currentPriority } }
        set {
            lock.withLock {
                currentPriority = newValue
                subscription?.setPriority(newValue)
            }
        }
    }

    /// Stops waiting for the image; the task finishes with `.cancelled` unless its result was
    /// already delivered. Work that other requests still need goes on.
    public func cancel() {
        let (subscription, withdrawn) = lock.withLock { () -> (JobSubscription?, Bool) in
            cancelled = true
            guard let outcome else { return (self.subscription, false) }
            // Finished, not yet delivered: the caller never sees the image it gave up on.
            guard !delivered, case .success = outcome else { return (nil, false) }
            self.outcome = .failure(.cancelled)
            return (nil, true)
        }
        if withdrawn { recorder.add(.cancelledRequests) }
        subscription?.cancel()
    }

    /// The result once there is one, without throwing.
    public var result: Result<ImageResponse, ImagePipelineError>? { lock.withLock { outcome } }

    /// The image, waiting for it if needed. Cancelling the awaiting task cancels this task,
    /// and the getter throws `.cancelled` at once.
    ///
    /// `nonisolated(nonsending)`: the outcome is read on the caller's executor (the main actor,
    /// for a cell) after the wait, so a `cancel()` that the caller's own code made meanwhile (the
    /// cell was reused) is seen, and the getter throws `.cancelled` instead of handing over the
    /// previous product's image.
    public nonisolated(nonsending) var response: ImageResponse {
        get async throws(ImagePipelineError) {
            await withTaskCancellationHandler {
                _ = await self.result()
            } onCancel: {
                cancel()
            }
            try Task.checkCancellation(or: ImagePipelineError.cancelled)
            // The outcome as it is now, not as it was when the waiter was resumed: a `cancel()`
            // in between has made it `.cancelled`. Reading it hands it over, as a delivery does,
            // so a later `cancel()` cannot make the completion disagree with what was returned.
            let outcome = lock.withLock { () -> Result<ImageResponse, ImagePipelineError>? in
                delivered = true
                return self.outcome
            }
            guard let outcome else { throw .cancelled }
            return try outcome.get()
        }
    }

    /// The events as a stream, which ends after `.finished`; made when first asked for, it
    /// starts with the progress from then on (or just the result, if the task has finished).
    public var events: AsyncStream<Event> {
        lock.withLock {
            if let eventStream { return eventStream }
            // The newest events are kept: a reader that falls behind loses old progress, never the result.
            let (stream, sink) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(16))
            (eventStream, eventSink) = (stream, sink)
            if delivered, let outcome {
                sink.yield(.finished(outcome))
                sink.finish()
            }
            return stream
        }
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

    private func yield(_ event: Event) {
        lock.withLock { eventSink }?.yield(event)
    }

    private func finish(_ result: Result<ImageResponse, ImagePipelineError>) {
        let (finished, waiters) = lock.withLock {
            () -> (Result<ImageResponse, ImagePipelineError>?, [CheckedContinuation<Result<ImageResponse, ImagePipelineError>, Never>]) in
            guard outcome == nil else { return (nil, []) }
            let finished: Result<ImageResponse, ImagePipelineError> = cancelled ? .failure(.cancelled) : result
            outcome = finished
            subscription = nil
            defer { self.waiters.removeAll() }
            return (finished, self.waiters)
        }
        guard let finished else { return }
        switch finished {
        case .failure(.cancelled) where lock.withLock({ cancelled }): recorder.add(.cancelledRequests)
        case .failure: recorder.add(.failures)
        case .success: break
        }
        waiters.forEach { $0.resume(returning: finished) }
        // Never on the caller's stack: a completion run inside imageTask(with:) (a memory hit)
        // or inside cancel() would see a handle its caller does not hold yet, or re-enter it.
        callbackQueue.async { [self] in deliver() }
    }

    /// Hands the result to the completion and the event stream, as it is now: a `cancel()`
    /// since the finish has made it `.cancelled`.
    private func deliver() {
        let (result, sink) = lock.withLock { () -> (Result<ImageResponse, ImagePipelineError>?, AsyncStream<Event>.Continuation?) in
            delivered = true
            return (outcome, eventSink)
        }
        guard let result else { return }
        sink?.yield(.finished(result))
        sink?.finish()
        completion?(result)
    }
}
