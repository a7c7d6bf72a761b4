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
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
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
        let task = session.dataTask(with: request)
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
}
