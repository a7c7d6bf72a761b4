import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImagePipeline
import TestSupport

/// A `DataLoading` double whose requests wait until the test lets each one finish, so the order
/// the pipeline starts them in can be observed deterministically.
final class ScriptedLoader: DataLoading, @unchecked Sendable {
    private let lock = NSLock()
    private var started: [String] = []
    private var pending: [String: CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>] = [:]
    private var bodies: [String: Data] = [:]
    private var cancelled: [String] = []

    /// Serves `data` for URLs whose last path component is `name`.
    func set(_ name: String, _ data: Data) { lock.withLock { bodies[name] = data } }

    /// Names of the requests started so far, in order.
    var startedNames: [String] { lock.withLock { started } }

    /// Names of the requests the pipeline cancelled while they waited.
    var cancelledNames: [String] { lock.withLock { cancelled } }

    func loadData(
        for request: URLRequest, maximumBodySize: Int,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        let name = request.url?.lastPathComponent ?? ""
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancelled before this registers: the handler found nothing to resume, so
                // answer here (the handler records the cancellation).
                let alreadyCancelled = lock.withLock { () -> Bool in
                    started.append(name)
                    guard !Task.isCancelled else { return true }
                    pending[name] = continuation
                    return false
                }
                if alreadyCancelled { continuation.resume(returning: .failure(.cancelled)) }
            }
        } onCancel: {
            let continuation = lock.withLock { () -> CheckedContinuation<Result<DataLoadingResponse, DataLoadingError>, Never>? in
                cancelled.append(name)
                return pending.removeValue(forKey: name)
            }
            continuation?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    /// Waits until `count` requests have started.
    func waitForStarts(_ count: Int) async -> Bool {
        await pollUntil { self.startedNames.count >= count }
    }

    /// Completes the request for `name` with its body (or a 404 if none was set).
    func finish(_ name: String) {
        let (continuation, body) = lock.withLock { (pending.removeValue(forKey: name), bodies[name]) }
        let response =
            body.map { DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "max-age=60"], data: $0) }
            ?? DataLoadingResponse(statusCode: 404)
        continuation?.resume(returning: .success(response))
    }
}
