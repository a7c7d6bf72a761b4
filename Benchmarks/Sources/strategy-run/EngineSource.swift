import Foundation
import ImageCodec
import ImagePipeline

/// S3-S7: the engine's pipeline with one of its strategies, every request at one size (the
/// cell's aspect-fill square unless a row measures another).
final class EngineSource: GridImageSource, @unchecked Sendable {
    struct TaskHandle: Cancellable {
        let task: ImageTask
        let scrolledOff: ScrolledOffTasks
        func cancel() { task.cancel() }
        /// The grid article's option: keep it running at the prefetch's priority (bounded).
        func park() { scrolledOff.park(task) }
    }

    let pipeline: ImagePipeline
    private let requests: [ImageRequest]
    private let prefetcher: ImagePrefetcher
    /// The grid article's option, with the library's defaults.
    private let scrolledOff = ScrolledOffTasks()
    /// False for the `.encodedResponse` variant that never decodes on the frame thread.
    private let lookUpOnFrame: Bool

    init(urls: [URL], configuration: ImagePipeline.Configuration, lookUpOnFrame: Bool = true, resize: Resize = cellResize) {
        pipeline = ImagePipeline(configuration: configuration)
        // The cache key is the product, not the URL, so a relaunch against a server on another
        // port finds its disk entries.
        requests = urls.enumerated().map { ImageRequest(url: $1, resize: resize, priority: .high, cacheKey: "product-\($0)") }
        prefetcher = ImagePrefetcher(pipeline: pipeline, priority: .low)
        self.lookUpOnFrame = lookUpOnFrame
    }

    func cachedImage(for product: Int) -> Bitmap? {
        lookUpOnFrame ? pipeline.cachedImage(for: requests[product])?.bitmap : nil
    }

    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable {
        TaskHandle(
            task: pipeline.imageTask(with: requests[product]) { result in
                completion((try? result.get()).map { Payload.bitmap($0.bitmap) })
            }, scrolledOff: scrolledOff)
    }

    func startPrefetching(_ products: [Int]) { prefetcher.startPrefetching(with: products.map { requests[$0] }) }

    func stopPrefetching(_ products: [Int]) { prefetcher.stopPrefetching(with: products.map { requests[$0] }) }

    var decodes: Int { pipeline.statistics.decodes }
    var memoryCost: Int { pipeline.statistics.memoryCost }
    var diskBytes: Int { pipeline.statistics.diskBytes }
}
