import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Locking

/// The default `DataLoading`: `URLSession` (FoundationNetworking on Linux), streaming each body
/// through a delegate so the size limit, progress and timeouts apply while bytes arrive.
///
/// No `URLCache`: the pipeline does its own HTTP caching, and caching the same response twice
/// would cost disk and time for nothing.
public final class URLSessionDataLoader: DataLoading {
    /// Timeouts and connection limits.
    public struct Configuration: Sendable, Hashable {
        /// Seconds until the response head must have arrived.
        public var connectTimeout: TimeInterval
        /// Seconds the transfer may go without a byte.
        public var idleTimeout: TimeInterval
        /// Seconds the whole transfer may take, from request to last byte.
        public var requestTimeout: TimeInterval
        /// Connections kept per host.
        public var maximumConnectionsPerHost: Int

        /// Timeouts suited to phones on slow networks.
        public init(
            connectTimeout: TimeInterval = 10, idleTimeout: TimeInterval = 15, requestTimeout: TimeInterval = 60,
            maximumConnectionsPerHost: Int = 6
        ) {
            self.connectTimeout = connectTimeout
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
        }
    }

    /// The timeouts this loader applies.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate = SessionDelegate()

    /// A loader with its own `URLSession`.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, taskSeam: nil)
    }

    /// `taskSeam` sees each `URLSessionTask` before it starts (tests only).
    init(configuration: Configuration, taskSeam: (@Sendable (URLSessionTask) -> Void)?) {
        self.configuration = configuration
        self.taskSeam = taskSeam
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.timeoutIntervalForRequest = configuration.idleTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.requestTimeout
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        // The session keeps its delegate until invalidated.
        session.invalidateAndCancel()
    }

    public func loadData(
        for request: URLRequest, maximumBodySize: Int,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        try await loadData(for: request, maximumBodySize: maximumBodySize, priority: DownloadPriority(.normal), progress: progress)
    }

    /// Sets the `URLSessionTask`'s priority from `priority`, and again on each change.
    public func loadData(
        for request: URLRequest, maximumBodySize: Int, priority: DownloadPriority,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        let task = session.dataTask(with: request)
        task.priority = priority.current.sessionTaskPriority
        // Setting the property takes URLSessionTask's own lock and calls nothing back.
        priority.onChange { [weak task] in task?.priority = $0.sessionTaskPriority }
        taskSeam?(task)
        let transfer = Transfer(task: task, maximumBodySize: maximumBodySize, progress: progress)
        let pending = PendingCancellation<Transfer>()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>) in
                transfer.start(continuation: continuation, delegate: delegate, configuration: configuration)
                if !pending.attach(transfer) { transfer.fail(.cancelled) }
            }
        } onCancel: {
            pending.cancel()?.fail(.cancelled)
        }
        return try result.get()
    }

    /// Called with each task before it starts (tests read its priority back).
    private let taskSeam: (@Sendable (URLSessionTask) -> Void)?
}

extension ImageRequest.Priority {
    /// `URLSessionTask.priority`: libcurl (Linux) and Darwin's stack weigh HTTP/2 streams by it.
    var sessionTaskPriority: Float {
        switch self {
        case .veryLow: 0.1
        case .low: URLSessionTask.lowPriority
        case .normal: URLSessionTask.defaultPriority
        case .high: URLSessionTask.highPriority
        case .veryHigh: 1
        }
    }
}
