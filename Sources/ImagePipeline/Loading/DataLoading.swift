import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads the bytes of a request: the seam where tests and clients inject their own transport.
///
/// The pipeline calls it from a task that is cancelled when nobody wants the image any more;
/// a loader must then stop the transfer (close the connection) and throw `.cancelled`.
public protocol DataLoading: Sendable {
    /// Sends `request` and returns the whole response, whatever its status. Throws
    /// `.bodyTooLarge` as soon as the body announces or reaches more than `maximumBodySize`
    /// bytes (without receiving the rest), and `.truncatedBody` when the connection ends before
    /// the announced `Content-Length`. `progress` is called as bytes arrive.
    func loadData(
        for request: URLRequest, maximumBodySize: Int,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse

    /// The same, told how urgent the download is and each change while it runs (the pipeline
    /// calls this one). The default ignores `priority` and calls the method above, so a loader
    /// written before priorities reached loaders keeps working unchanged.
    func loadData(
        for request: URLRequest, maximumBodySize: Int, priority: DownloadPriority,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse
}

extension DataLoading {
    /// Ignores `priority`: see the requirement.
    public func loadData(
        for request: URLRequest, maximumBodySize: Int, priority: DownloadPriority,
        progress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void
    ) async throws(DataLoadingError) -> DataLoadingResponse {
        try await loadData(for: request, maximumBodySize: maximumBodySize, progress: progress)
    }
}
