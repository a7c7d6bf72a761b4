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
///   when the last one for a download goes, the connection is closed. A cancelled caller always
///   gets `.cancelled`, never an image that arrived as it was cancelled.
/// - Downloads and decodes are limited in number and start highest priority first; shared work
///   runs at the highest priority of its requests.
/// - HTTP caching as a private cache (RFC 9111): fresh entries are served without a request,
///   stale ones revalidated with `If-None-Match`/`If-Modified-Since` (a 304 updates the stored
///   headers), `no-store` and `Vary: *` kept nowhere, `Vary` honoured.
/// - Nothing half-downloaded is cached; downloaded bytes are kept once their header checks out
///   (a JPEG, PNG, WebP, HEIC or AVIF within the decoding limits) and dropped again if they do not decode.
/// - Disk reads and writes, and encoding stored thumbnails, run on the pipeline's own threads;
///   writes happen after the result is delivered.
///
/// ```swift
/// // Configuring a grid cell (aspect-fill, 400×400):
/// let request = ImageRequest(url: url, resize: .fill(width: 400, height: 400))
/// if let response = pipeline.cachedImage(for: request) {
///     cell.show(response.bitmap)                          // same frame, no flicker
/// } else {
///     cell.task = Task { cell.show(try await pipeline.image(for: request).bitmap) }
/// }
/// // On reuse: cell.task?.cancel() — the task then throws .cancelled, whatever arrives.
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
    /// The disk cache's reads and writes, on the pipeline's own threads.
    let diskQueue: DiskCacheQueue?
    /// Where disk reads of originals are charged (`Configuration.cachedDataMemory`).
    let readMemory: any ReadMemory
    /// Jobs, coalescing, the download and decode queues and priorities: all shared state.
    let coordinator: PipelineCoordinator
    /// What the decodes running at once may hold by their plans.
    let decodeMemory: MemoryBudget
    /// When each URL was last invalidated (the most recent 4,096): an image decoded from an
    /// original fetched before its URL's invalidation is not stored (see `invalidate(_:)`).
    let invalidations = MemoryCache<String, Date>(
        configuration: MemoryCacheConfiguration(costLimit: 4096, countLimit: 4096, maximumEntryCostFraction: 1))
    let recorder = StatisticsRecorder()

    /// A pipeline with `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let memory = MemoryCacheConfiguration(
            costLimit: configuration.memoryCacheLimit, maximumEntryCostFraction: configuration.memoryCacheMaximumEntryFraction,
            minimumUses: configuration.memoryCacheMinimumUses)
        switch configuration.strategy {
        case .encodedResponse:
            imageMemory = nil
            dataMemory = MemoryCache(configuration: memory, clock: configuration.clock)
        case .decoded, .downsampled:
            imageMemory = MemoryCache(configuration: memory, clock: configuration.clock)
            dataMemory = nil
        }
        let recorder = recorder
        diskQueue = configuration.diskCache.map {
            DiskCacheQueue(
                disk: $0, maximumPendingBytes: configuration.maximumPendingDiskWriteBytes, onError: { recorder.add(.diskErrors) },
                onDrop: { recorder.add(.droppedDiskWrites) })
        }
        decodeMemory = MemoryBudget(capacity: configuration.decodeMemoryLimit)
        readMemory = configuration.cachedDataMemory.map { ChargedReadMemory(ledger: MemoryLedger(budget: $0)) } ?? PlainReadMemory()
        coordinator = PipelineCoordinator(
            coalesces: configuration.coalescesRequests, maximumDownloads: configuration.maximumConcurrentDownloads,
            maximumDecodes: configuration.maximumConcurrentDecodes, decodeMemory: decodeMemory,
            maximumOriginalsHeld: configuration.originalsHeldLimit)
    }

    // MARK: - Loading

    /// Loads the image: from memory, disk or network as the request's cache policy allows.
    /// Cancelling the calling task cancels the request, and then this throws `.cancelled` even
    /// if the image was already on its way: a reused cell never shows the previous product.
    ///
    /// `nonisolated(nonsending)`: it starts on the caller's executor (the main actor, for a
    /// cell), so a memory hit returns without hopping threads; the work of a miss runs elsewhere.
    public nonisolated(nonsending) func image(for request: ImageRequest) async throws(ImagePipelineError) -> ImageResponse {
        try Task.checkCancellation(or: ImagePipelineError.cancelled)
        if let response = memoryResponse(for: request, decodingEncoded: false) { return response }
        return try await ImageTask(request: request, pipeline: self).response
    }

    /// Loads the image's original bytes, through the same caches and coalesced with every other
    /// request for the URL, for callers that decode themselves (`resize` is ignored). The bytes
    /// are a JPEG, PNG, WebP, HEIC, AVIF or GIF whose header is within the decoding limits; a caller that then finds
    /// them undecodable should `removeCachedData(for:)`.
    public nonisolated(nonsending) func data(for request: ImageRequest) async throws(ImagePipelineError) -> DataResponse {
        try Task.checkCancellation(or: ImagePipelineError.cancelled)
        let job = dataJob(for: request, staleInMemory: nil)
        let result = await coordinator.result(
            of: job, priority: request.priority, onJoin: { [recorder] in recorder.add(.coalescedRequests) })
        try Task.checkCancellation(or: ImagePipelineError.cancelled)
        let original = try result.get()
        // Only a revalidation of an image held in memory alone comes without bytes, and this job has no stale image.
        guard let data = original.data else { throw .notCached }
        let image: ImageSource
        if let read = original.image {
            image = read
        } else {
            do {
                image = try readHeader(data)
            } catch {
                // Cached bytes whose header does not read are of no use to the next request either.
                removeOriginal(request.dataKey)
                throw error
            }
        }
        return DataResponse(
            image: image, source: original.source, bytesDownloaded: original.bytesDownloaded,
            etag: original.info?.etag, lastModified: original.info?.lastModified, contentType: original.info?.contentType)
    }

    /// The frames of the request's image, for a view that plays animations: its original bytes
    /// loaded as ``data(for:)`` loads them (the same caches, coalesced), then each frame
    /// composited as browsers show it and resized as `request.resize` says when asked for with
    /// `next()` — off the main thread, as a decode. ``image(for:)`` gives the first frame alone,
    /// which is what a cell shows unless it plays; a still image is one frame either way. At
    /// most `maxFrames` (the first ones).
    ///
    /// ```swift
    /// var frames = try await pipeline.animation(for: ImageRequest(url: url, maxPixelSize: 400))
    /// while let frame = try frames.next() { show(frame.bitmap, for: frame.durationMilliseconds) }
    /// ```
    public nonisolated(nonsending) func animation(
        for request: ImageRequest, maxFrames: Int = 256
    ) async throws(ImagePipelineError)
        -> AnimationDecoder
    {
        let response = try await data(for: request)
        do throws(ImageCodecError) {
            return try AnimationDecoder(source: response.image, options: decodingOptions(request.resize), maxFrames: maxFrames)
        } catch .invalidArgument {
            throw .invalidRequest(.invalidArgument("maxFrames must be at least 1, got \(maxFrames)"))
        } catch {
            throw .decodingFailed(error)
        }
    }

    /// The bytes a disk-cache hit for `request`'s original would read (its entry as the disk
    /// cache records it, an upper bound), found without any I/O; nil when it is not on disk or
    /// the pipeline has none. For a caller that reserves memory before the read, as the
    /// thumbnail service does before ``data(for:)``.
    public func storedOriginalSize(for request: ImageRequest) -> Int? {
        guard request.usesCache, let disk = configuration.diskCache else { return nil }
        return disk.storedSize(forKey: request.dataKey)
    }

    /// Starts loading the image and returns a handle to follow it, change its priority or
    /// cancel it; for callers that are not `async`. `completion` runs once, asynchronously on
    /// `Configuration.callbackQueue`: never inside this call or inside `ImageTask.cancel()`, and
    /// never with an image once the task was cancelled.
    @discardableResult
    public func imageTask(
        with request: ImageRequest,
        completion: (@Sendable (Result<ImageResponse, ImagePipelineError>) -> Void)? = nil
    ) -> ImageTask {
        ImageTask(request: request, pipeline: self, completion: completion)
    }

    /// The image for `request` if the memory cache can serve it now, on the calling thread, with
    /// no I/O: a grid cell being configured can show a hit in the same frame.
    ///
    /// With `.encodedResponse` a hit is the original bytes, decoded here on the calling thread:
    /// that is the price of caching responses, paid where the display asks for them.
    public func cachedImage(for request: ImageRequest) -> ImageResponse? {
        memoryResponse(for: request, decodingEncoded: true)
    }

    // MARK: - Removing

    /// Removes the decoded image for `request` (its URL at its resize) from memory, and its
    /// stored thumbnail from disk; the original bytes stay.
    public func removeCachedImage(for request: ImageRequest) {
        imageMemory?.removeValue(forKey: memoryKey(for: request))
        if let key = thumbnailKey(for: request) { diskQueue?.remove(forKey: key) }
    }

    /// Removes the original bytes for `request`'s URL from memory and disk: the next load
    /// downloads them again.
    public func removeCachedData(for request: ImageRequest) {
        removeOriginal(request.dataKey)
    }

    /// Removes everything from the memory cache (and, with `disk`, from the disk cache, after
    /// dropping the writes still queued).
    public func removeAllCachedImages(disk: Bool = false) throws(DiskCacheError) {
        imageMemory?.removeAll()
        dataMemory?.removeAll()
        if disk { try diskQueue?.removeAll() }
    }

    /// Waits until the disk writes queued so far (originals, thumbnails, removals) are done.
    public func flushDiskWrites() async {
        await diskQueue?.flush()
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

    /// The options every decode of `resize` uses.
    func decodingOptions(_ resize: Resize?) -> DecodingOptions {
        DecodingOptions(
            resize: resize, colorManagement: configuration.colorManagement, limits: configuration.decodingLimits,
            fastShrinkOnLoad: configuration.fastShrinkOnLoad)
    }
}
