import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec

/// Loads images over HTTP through a memory cache, a disk cache and the network.
///
/// - Identical requests in flight share one download and one decode; requests for the same
///   URL at different sizes share the download and the disk read, not the decode.
/// - Cancelling a request (its Swift task, or `ImageTask.cancel()`) leaves the others alone;
///   when the last one for a download goes, the connection is closed.
/// - Downloads and decodes are limited in number and start highest priority first; shared work
///   runs at the highest priority of its requests.
/// - HTTP caching as a private cache (RFC 9111): fresh entries are served without a request,
///   stale ones revalidated with `If-None-Match`/`If-Modified-Since`, `no-store` kept nowhere.
/// - Nothing half-downloaded or undecodable is cached.
///
/// ```swift
/// // Configuring a grid cell (aspect-fill, 400×400):
/// let request = ImageRequest(url: url, resize: .fill(width: 400, height: 400))
/// if let bitmap = pipeline.cachedImage(for: request) {
///     cell.show(bitmap)                                   // same frame, no flicker
/// } else {
///     cell.task = Task { cell.show(try await pipeline.image(for: request).bitmap) }
/// }
/// // On reuse: cell.task?.cancel()
/// ```
public final class ImagePipeline: Sendable {
    /// A pipeline with the default configuration, for apps that want one shared instance.
    public static let shared = ImagePipeline()

    /// The configuration the pipeline was made with.
    public let configuration: Configuration
    /// Decoded images (`.decoded`, `.downsampled`).
    let imageMemory: MemoryCache<ImageMemoryKey, CachedImage>?
    /// Original bytes (`.encodedResponse`).
    let dataMemory: MemoryCache<String, CachedData>?
    let dataJobs: JobRegistry<DataJobKey, OriginalData>
    let imageJobs: JobRegistry<ImageJobKey, ImageResponse>
    let downloads: WorkQueue
    let decodes: WorkQueue
    let recorder = StatisticsRecorder()

    /// A pipeline with `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let memory = MemoryCacheConfiguration(costLimit: configuration.memoryCacheLimit)
        switch configuration.strategy {
        case .encodedResponse:
            imageMemory = nil
            dataMemory = MemoryCache(configuration: memory, clock: configuration.clock)
        case .decoded, .downsampled:
            imageMemory = MemoryCache(configuration: memory, clock: configuration.clock)
            dataMemory = nil
        }
        dataJobs = JobRegistry(coalesces: configuration.coalescesRequests)
        imageJobs = JobRegistry(coalesces: configuration.coalescesRequests)
        downloads = WorkQueue(maximumConcurrent: configuration.maximumConcurrentDownloads)
        decodes = WorkQueue(maximumConcurrent: configuration.maximumConcurrentDecodes)
    }

    // MARK: - Loading

    /// Loads the image: from memory, disk or network as the request's cache policy allows.
    /// Cancelling the calling task cancels the request.
    ///
    /// `nonisolated(nonsending)`: it starts on the caller's executor (the main actor, for a
    /// cell), so a memory hit returns without hopping threads; the work of a miss runs elsewhere.
    public nonisolated(nonsending) func image(for request: ImageRequest) async throws(ImagePipelineError) -> ImageResponse {
        if let response = memoryResponse(for: request, decodingEncoded: false) { return response }
        let task = ImageTask(request: request, pipeline: self)
        let result = await withTaskCancellationHandler {
            await task.result()
        } onCancel: {
            task.cancel()
        }
        return try result.get()
    }

    /// Starts loading the image and returns a handle to follow it, change its priority or
    /// cancel it; for callers that are not `async`. `completion` runs once, on an arbitrary thread.
    @discardableResult
    public func imageTask(with request: ImageRequest,
                          completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)? = nil) -> ImageTask {
        ImageTask(request: request, pipeline: self, completion: completion)
    }

    /// The image for `request` if the memory cache can serve it now, on the calling thread, with
    /// no I/O: a grid cell being configured can show a hit in the same frame.
    ///
    /// With `.encodedResponse` a hit is the original bytes, decoded here on the calling thread:
    /// that is the price of caching responses, paid where the display asks for them.
    public func cachedImage(for request: ImageRequest) -> Bitmap? {
        memoryResponse(for: request, decodingEncoded: true)?.bitmap
    }

    /// Removes everything from the memory cache (and, with `disk`, from the disk cache).
    public func removeAllCachedImages(disk: Bool = false) throws(DiskCacheError) {
        imageMemory?.removeAll()
        dataMemory?.removeAll()
        if disk { try configuration.diskCache?.removeAll() }
    }

    /// Counters since creation and what the caches hold now.
    public var statistics: ImagePipelineStatistics {
        var statistics = recorder.snapshot
        if let imageMemory {
            let memory = imageMemory.statistics
            (statistics.memoryCost, statistics.memoryCount) = (memory.totalCost, memory.count)
        } else if let dataMemory {
            let memory = dataMemory.statistics
            (statistics.memoryCost, statistics.memoryCount) = (memory.totalCost, memory.count)
        }
        if let disk = configuration.diskCache?.statistics {
            (statistics.diskBytes, statistics.diskCount) = (disk.totalBytes, disk.count)
        }
        return statistics
    }

    // MARK: - Memory

    /// The size images for `request` are decoded at and cached under: nil (full size) for `.decoded`.
    func decodeSize(for request: ImageRequest) -> Resize? {
        configuration.strategy == .decoded ? nil : request.resize
    }

    func memoryKey(for request: ImageRequest) -> ImageMemoryKey {
        ImageMemoryKey(dataKey: request.dataKey, resize: decodeSize(for: request))
    }

    /// A memory hit the request's policy allows: fresh for `useCache`, anything for
    /// `returnCacheDataDontLoad`, nothing for the policies that must ask the server.
    func memoryResponse(for request: ImageRequest, decodingEncoded: Bool) -> ImageResponse? {
        let now = configuration.clock.now
        func allowed(_ info: HTTPCacheInfo) -> Bool {
            switch request.cachePolicy {
            case .useCache: info.isFresh(at: now)
            case .returnCacheDataDontLoad: true
            case .reloadIgnoringCache, .revalidate: false
            }
        }
        if let imageMemory {
            guard let hit = imageMemory.value(forKey: memoryKey(for: request)), allowed(hit.info) else { return nil }
            recorder.add(.memoryHits)
            return ImageResponse(bitmap: hit.bitmap, source: .memory)
        }
        guard decodingEncoded, let dataMemory, let hit = dataMemory.value(forKey: request.dataKey), allowed(hit.info),
              let bitmap = try? decode(hit.data, resize: decodeSize(for: request)) else { return nil }
        recorder.add(.memoryHits)
        return ImageResponse(bitmap: bitmap, source: .memory)
    }

    /// Decodes on the calling thread and counts it.
    func decode(_ data: Data, resize: Resize?) throws(ImagePipelineError) -> Bitmap {
        recorder.add(.decodes)
        let decoder = ImageDecoder(options: DecodingOptions(resize: resize, colorManagement: configuration.colorManagement,
                                                            limits: configuration.decodingLimits))
        do {
            return try decoder.decode(data)
        } catch {
            throw .decodingFailed(error)
        }
    }
}
