import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Locking

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
    /// Deadlines run on the monotonic clock: a wall clock set back (NTP, the user) must not
    /// stretch a timeout, nor one set forward fire it early.
    private var started = ContinuousClock.now
    private var lastActivity = ContinuousClock.now
    private var watchdog: DispatchSourceTimer?

    init(task: URLSessionDataTask, maximumBodySize: Int, progress: @escaping @Sendable (Int, Int?) -> Void) {
        self.task = task
        self.maximumBodySize = maximumBodySize
        self.progress = progress
    }

    /// Sends the request; every outcome after this resumes `continuation`, once.
    func start(
        continuation: CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>,
        delegate: SessionDelegate, configuration: URLSessionDataLoader.Configuration
    ) {
        lock.withLock {
            self.continuation = continuation
            started = .now
            lastActivity = started
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
            let now = ContinuousClock.now
            let expired = lock.withLock {
                now - started > .seconds(configuration.requestTimeout)
                    || (response == nil && now - started > .seconds(configuration.connectTimeout))
                    || now - lastActivity > .seconds(configuration.idleTimeout)
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
            lastActivity = .now
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
            lastActivity = .now
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
            resume(.failure(.connectionLost))
        }
    }

    /// Ends the transfer with `error` (the first outcome wins) and closes the connection.
    func fail(_ error: DataLoadingError) {
        resume(.failure(error))
        task.cancel()
    }

    private func resume(_ result: Result<DataLoadingResponse, DataLoadingError>) {
        let (continuation, watchdog) = lock.withLock {
            () -> (CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>?, DispatchSourceTimer?) in
            guard !finished, let continuation = self.continuation else { return (nil, nil) }
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
        guard let urlError = error as? URLError else { return .other(code: (error as NSError).code) }
        switch urlError.code {
        case .cancelled: return .cancelled
        case .timedOut: return .timedOut
        case .cannotFindHost, .dnsLookupFailed: return .cannotConnect(.hostNotFound)
        case .cannotConnectToHost: return .cannotConnect(.refused)
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed: return .cannotConnect(.unreachable)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected, .clientCertificateRequired:
            return .cannotConnect(.secureConnectionFailed)
        case .networkConnectionLost: return .connectionLost
        case .httpTooManyRedirects, .redirectToNonExistentLocation: return .redirectRefused
        default: return .other(code: urlError.code.rawValue)
        }
    }
}
