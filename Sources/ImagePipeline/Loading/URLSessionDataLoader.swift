import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
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
        public init(connectTimeout: TimeInterval = 10, idleTimeout: TimeInterval = 15, requestTimeout: TimeInterval = 60,
                    maximumConnectionsPerHost: Int = 6) {
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

    public func loadData(for request: URLRequest, maximumBodySize: Int,
                         progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void)
        async throws(DataLoadingError) -> DataLoadingResponse {
        let task = session.dataTask(with: request)
        let transfer = Transfer(task: task, maximumBodySize: maximumBodySize, progress: progress)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>) in
                transfer.start(continuation: continuation, delegate: delegate, configuration: configuration)
            }
        } onCancel: {
            transfer.fail(.cancelled)
        }
        return try result.get()
    }
}

/// One request in flight: its bytes so far, its deadlines, and the continuation to resume
/// exactly once.
final class Transfer: @unchecked Sendable {
    // @unchecked: mutable state only under `lock`.
    let task: URLSessionDataTask
    private let maximumBodySize: Int
    private let progress: @Sendable (Int, Int?) -> Void
    private let lock = Lock()
    private var continuation: CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>?
    private var finished = false
    private var response: HTTPURLResponse?
    private var data = Data()
    private var expected: Int?
    private var started = Date()
    private var lastActivity = Date()
    private var watchdog: DispatchSourceTimer?

    init(task: URLSessionDataTask, maximumBodySize: Int, progress: @escaping @Sendable (Int, Int?) -> Void) {
        self.task = task
        self.maximumBodySize = maximumBodySize
        self.progress = progress
    }

    func start(continuation: CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>,
               delegate: SessionDelegate, configuration: URLSessionDataLoader.Configuration) {
        let alreadyFailed = lock.withLock { () -> Bool in
            self.continuation = continuation
            started = Date()
            lastActivity = started
            return finished
        }
        if alreadyFailed {
            // Cancelled before it started: resume now that the continuation exists.
            resume(.failure(.cancelled))
            return
        }
        delegate.register(self)
        startWatchdog(configuration)
        task.resume()
    }

    /// Checks the deadlines ten times a second; URLSession's own timeouts are not relied on
    /// for the connect phase or for a slow drip that never goes idle.
    private func startWatchdog(_ configuration: URLSessionDataLoader.Configuration) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 0.1, repeating: 0.1)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let now = Date()
            let expired = lock.withLock {
                now.timeIntervalSince(started) > configuration.requestTimeout
                    || (response == nil && now.timeIntervalSince(started) > configuration.connectTimeout)
                    || now.timeIntervalSince(lastActivity) > configuration.idleTimeout
            }
            if expired { fail(.timedOut) }
        }
        lock.withLock { watchdog = timer }
        timer.resume()
    }

    /// The response head arrived: refuse at once a body announced over the limit.
    func receive(response urlResponse: URLResponse) -> Bool {
        let announced = urlResponse.expectedContentLength >= 0 ? Int(urlResponse.expectedContentLength) : nil
        let accepted = lock.withLock { () -> Bool in
            response = urlResponse as? HTTPURLResponse
            expected = announced
            lastActivity = Date()
            return (announced ?? 0) <= maximumBodySize
        }
        if !accepted { fail(.bodyTooLarge(limit: maximumBodySize)) }
        return accepted
    }

    func receive(data chunk: Data) {
        let (count, expected, overLimit) = lock.withLock { () -> (Int, Int?, Bool) in
            guard !finished else { return (0, nil, false) }
            guard data.count + chunk.count <= maximumBodySize else { return (0, nil, true) }
            data.append(chunk)
            lastActivity = Date()
            return (data.count, self.expected, false)
        }
        if overLimit {
            fail(.bodyTooLarge(limit: maximumBodySize))
        } else if count > 0 {
            progress(count, expected)
        }
    }

    func complete(error: (any Error)?) {
        let (response, data, expected) = lock.withLock { (self.response, self.data, self.expected) }
        // A body length is only promised for a body that exists and is not re-encoded.
        let encoded = response?.value(forHTTPHeaderField: "Content-Encoding").map { $0 != "identity" } ?? false
        let bodiless = [204, 304].contains(response?.statusCode ?? 0) || task.originalRequest?.httpMethod == "HEAD"
        if let expected, !encoded, !bodiless, data.count < expected, (error == nil || (error as? URLError)?.code != .cancelled) {
            resume(.failure(.truncatedBody(expected: expected, received: data.count)))
        } else if let error {
            resume(.failure(Self.map(error)))
        } else if let response {
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            resume(.success(DataLoadingResponse(statusCode: response.statusCode, headers: headers, data: data, url: response.url)))
        } else {
            resume(.failure(.other("no HTTP response")))
        }
    }

    /// Ends the transfer with `error` (the first outcome wins) and closes the connection.
    func fail(_ error: DataLoadingError) {
        resume(.failure(error))
        task.cancel()
    }

    private func resume(_ result: Result<DataLoadingResponse, DataLoadingError>) {
        let (continuation, watchdog) = lock.withLock { () -> (CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>?, DispatchSourceTimer?) in
            guard !finished else { return (nil, nil) }
            // Before `start`, only mark it: `start` resumes once the continuation exists.
            guard let continuation = self.continuation else {
                finished = true
                return (nil, nil)
            }
            finished = true
            self.continuation = nil
            let watchdog = self.watchdog
            self.watchdog = nil
            data = Data()
            return (continuation, watchdog)
        }
        watchdog?.cancel()
        continuation?.resume(returning: result)
    }

    private static func map(_ error: any Error) -> DataLoadingError {
        guard let urlError = error as? URLError else { return .other("\(error)") }
        switch urlError.code {
        case .cancelled: return .cancelled
        case .timedOut: return .timedOut
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return .cannotConnect(urlError.localizedDescription)
        case .networkConnectionLost: return .connectionLost(urlError.localizedDescription)
        default: return .other(urlError.localizedDescription)
        }
    }
}

/// Routes URLSession's delegate calls to the transfer they belong to.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = Lock()
    private var transfers: [Int: Transfer] = [:]

    func register(_ transfer: Transfer) {
        lock.withLock { transfers[transfer.task.taskIdentifier] = transfer }
    }

    private func transfer(_ task: URLSessionTask) -> Transfer? {
        lock.withLock { transfers[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let accepted = transfer(dataTask)?.receive(response: response) ?? false
        completionHandler(accepted ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(dataTask)?.receive(data: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let transfer = lock.withLock { transfers.removeValue(forKey: task.taskIdentifier) }
        transfer?.complete(error: error)
    }
}
