import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImagePipeline
import TestSupport

/// A `DataLoading` double that keeps every request waiting until the test answers it, by its
/// arrival number, with any response: for interleavings of several requests for one URL (a
/// conditional one and a reload) that a real server would answer in arrival order.
final class AnsweringLoader: DataLoading, @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [URLRequest] = []
    private var pending: [Int: CheckedContinuation<DataLoadingResponse, Never>] = [:]

    /// The requests received so far, in order.
    var received: [URLRequest] { lock.withLock { requests } }

    func loadData(
        for request: URLRequest, maximumBodySize: Int,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        await withCheckedContinuation { continuation in
            lock.withLock {
                pending[requests.count] = continuation
                requests.append(request)
            }
        }
    }

    /// Waits until `count` requests have arrived.
    func waitForRequests(_ count: Int) async -> Bool {
        await pollUntil { self.received.count >= count }
    }

    /// Answers request number `index` (0-based).
    func answer(_ index: Int, _ response: DataLoadingResponse) {
        lock.withLock { pending.removeValue(forKey: index) }?.resume(returning: response)
    }
}
