import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec
import ImagePipeline
import Synchronization

/// What arrives for a cell: a bitmap, or encoded bytes the display decodes (as `UIImage(data:)`
/// does at first draw).
enum Payload: Sendable {
    case bitmap(Bitmap)
    case encoded(Data)
}

protocol Cancellable: Sendable {
    func cancel()
}

/// How one strategy gets images for the grid: the client code a team would write with it.
protocol GridImageSource: AnyObject, Sendable {
    /// On the frame thread while a cell is configured: the synchronous cache lookup (a decode
    /// done here lands in the frame).
    func cachedImage(for product: Int) -> Bitmap?
    /// Starts loading; `completion` runs once on any thread (nil: failed or cancelled).
    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable
    /// On the frame thread when a payload arrives: what is shown (`.encoded` is decoded here).
    func display(_ payload: Payload) -> Bitmap?
    func startPrefetching(_ products: [Int])
    func stopPrefetching(_ products: [Int])
    /// Decodes so far, memory-cache cost and disk bytes now.
    var decodes: Int { get }
    var memoryCost: Int { get }
    var diskBytes: Int { get }
}

/// Counts decodes for the sources that decode themselves.
final class DecodeCounter: Sendable {
    private let count = Atomic<Int>(0)
    func decode(_ data: Data, maxPixelSize: Int? = nil) -> Bitmap? {
        count.wrappingAdd(1, ordering: .relaxed)
        return try? ImageDecoder(options: DecodingOptions(maxPixelSize: maxPixelSize)).decode(data)
    }
    var value: Int { count.load(ordering: .relaxed) }
}

struct TaskCancellable: Cancellable {
    let task: URLSessionTask
    func cancel() { task.cancel() }
}

/// Prefetch tasks by product, so scrolling past them can cancel them.
final class PrefetchTasks: @unchecked Sendable {
    private let lock = NSLock()
    private var tasks: [Int: any Cancellable] = [:]

    func start(_ product: Int, _ make: () -> any Cancellable) {
        lock.withLock {
            if tasks[product] == nil { tasks[product] = make() }
        }
    }

    func finished(_ product: Int) { _ = lock.withLock { tasks.removeValue(forKey: product) } }

    func cancel(_ products: [Int]) {
        let cancelled = lock.withLock { products.compactMap { tasks.removeValue(forKey: $0) } }
        cancelled.forEach { $0.cancel() }
    }
}

/// S1: the usual `ImageLoader`: look in a URLCache (memory and disk), else download with
/// URLSession and store the response there; every display decodes the full-size image, as
/// `UIImage(data:)` does. (URLSession on Linux does not fill a configured URLCache itself, so
/// the loader stores explicitly, as most image loaders do anyway.) `decodesOnFrame`: where a
/// `UIImage(data:)` client pays, at first display; otherwise on a background queue, with the
/// cache lookup there too.
final class URLCacheSource: GridImageSource, @unchecked Sendable {
    private let urls: [URL]
    private let cache: URLCache
    private let session = URLSession(configuration: .ephemeral)
    private let decodesOnFrame: Bool
    private let counter = DecodeCounter()
    private let prefetches = PrefetchTasks()

    init(urls: [URL], memoryLimit: Int, directory: URL, decodesOnFrame: Bool) {
        self.urls = urls
        self.decodesOnFrame = decodesOnFrame
        cache = URLCache(memoryCapacity: memoryLimit, diskCapacity: 1 << 30, diskPath: directory.path)
    }

    func cachedImage(for product: Int) -> Bitmap? {
        guard decodesOnFrame, let response = cache.cachedResponse(for: URLRequest(url: urls[product])) else { return nil }
        return counter.decode(response.data)
    }

    /// Downloads and stores the response; `completion` gets the bytes.
    private func download(_ product: Int, _ completion: @escaping @Sendable (Data?) -> Void) -> URLSessionDataTask {
        let request = URLRequest(url: urls[product])
        let task = session.dataTask(with: request) { [cache] data, response, _ in
            guard let data, let response = response as? HTTPURLResponse, response.statusCode == 200 else { return completion(nil) }
            cache.storeCachedResponse(CachedURLResponse(response: response, data: data), for: request)
            completion(data)
        }
        task.resume()
        return task
    }

    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable {
        if decodesOnFrame {
            return TaskCancellable(task: download(product) { completion($0.map(Payload.encoded)) })
        }
        let request = URLRequest(url: urls[product])
        let work = OffFrameLoad()
        DispatchQueue.global().async { [self] in
            if let cached = cache.cachedResponse(for: request) {
                return completion(counter.decode(cached.data).map(Payload.bitmap))
            }
            guard !work.isCancelled else { return completion(nil) }
            work.task = download(product) { [counter] data in completion(data.flatMap { counter.decode($0) }.map(Payload.bitmap)) }
        }
        return work
    }

    /// A load that first looks in the cache off the frame thread, then maybe downloads.
    final class OffFrameLoad: Cancellable, @unchecked Sendable {
        private let lock = NSLock()
        private var cancelled = false
        private var current: URLSessionTask?

        var isCancelled: Bool { lock.withLock { cancelled } }

        var task: URLSessionTask? {
            get { lock.withLock { current } }
            set {
                let cancelNow = lock.withLock { () -> Bool in
                    current = newValue
                    return cancelled
                }
                if cancelNow { newValue?.cancel() }
            }
        }

        func cancel() {
            let task = lock.withLock { () -> URLSessionTask? in
                cancelled = true
                return current
            }
            task?.cancel()
        }
    }

    func display(_ payload: Payload) -> Bitmap? {
        switch payload {
        case .bitmap(let bitmap): bitmap
        case .encoded(let data): counter.decode(data)
        }
    }

    func startPrefetching(_ products: [Int]) {
        for product in products {
            prefetches.start(product) {
                let task = download(product) { [prefetches] _ in prefetches.finished(product) }
                task.priority = URLSessionTask.lowPriority
                return TaskCancellable(task: task)
            }
        }
    }

    func stopPrefetching(_ products: [Int]) { prefetches.cancel(products) }

    var decodes: Int { counter.value }
    var memoryCost: Int { cache.currentMemoryUsage }
    var diskBytes: Int { cache.currentDiskUsage }
}

/// S2: NSCache of full-size decoded bitmaps (cost = bytes), filled by URLSession downloads
/// decoded on a background queue. No disk cache.
final class NSCacheSource: NSObject, GridImageSource, NSCacheDelegate, @unchecked Sendable {
    final class Box {
        let bitmap: Bitmap
        init(_ bitmap: Bitmap) { self.bitmap = bitmap }
    }

    private let urls: [URL]
    private let cache = NSCache<NSNumber, Box>()
    private let session = URLSession(configuration: .ephemeral)
    private let counter = DecodeCounter()
    private let prefetches = PrefetchTasks()
    private let cost = Atomic<Int>(0)

    init(urls: [URL], memoryLimit: Int) {
        self.urls = urls
        super.init()
        cache.totalCostLimit = memoryLimit
        cache.delegate = self
    }

    func cache(_ cache: NSCache<AnyObject, AnyObject>, willEvictObject object: Any) {
        if let box = object as? Box { cost.wrappingSubtract(box.bitmap.byteCount, ordering: .relaxed) }
    }

    func cachedImage(for product: Int) -> Bitmap? { cache.object(forKey: NSNumber(value: product))?.bitmap }

    private func fetch(_ product: Int, _ completion: @escaping @Sendable (Bitmap?) -> Void) -> URLSessionTask {
        let task = session.dataTask(with: urls[product]) { [self] data, response, _ in
            guard let data, (response as? HTTPURLResponse)?.statusCode == 200, let bitmap = counter.decode(data) else { return completion(nil) }
            cost.wrappingAdd(bitmap.byteCount, ordering: .relaxed)
            cache.setObject(Box(bitmap), forKey: NSNumber(value: product), cost: bitmap.byteCount)
            completion(bitmap)
        }
        task.resume()
        return task
    }

    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable {
        TaskCancellable(task: fetch(product) { completion($0.map(Payload.bitmap)) })
    }

    func display(_ payload: Payload) -> Bitmap? {
        if case .bitmap(let bitmap) = payload { return bitmap }
        return nil
    }

    func startPrefetching(_ products: [Int]) {
        for product in products where cachedImage(for: product) == nil {
            prefetches.start(product) {
                let task = fetch(product) { [prefetches] _ in prefetches.finished(product) }
                task.priority = URLSessionTask.lowPriority
                return TaskCancellable(task: task)
            }
        }
    }

    func stopPrefetching(_ products: [Int]) { prefetches.cancel(products) }

    var decodes: Int { counter.value }
    var memoryCost: Int { cost.load(ordering: .relaxed) }
    var diskBytes: Int { 0 }
}

/// S3-S6: the engine's pipeline with one of its strategies.
final class EngineSource: GridImageSource, @unchecked Sendable {
    struct TaskHandle: Cancellable {
        let task: ImageTask
        func cancel() { task.cancel() }
    }

    let pipeline: ImagePipeline
    private let requests: [ImageRequest]
    private let prefetcher: ImagePrefetcher
    /// False for the `.encodedResponse` variant that never decodes on the frame thread.
    private let lookUpOnFrame: Bool

    init(urls: [URL], configuration: ImagePipeline.Configuration, lookUpOnFrame: Bool = true) {
        pipeline = ImagePipeline(configuration: configuration)
        // The cache key is the product, not the URL, so a relaunch against a server on another
        // port finds its disk entries.
        requests = urls.enumerated().map { ImageRequest(url: $1, maxPixelSize: 400, priority: .high, cacheKey: "product-\($0)") }
        prefetcher = ImagePrefetcher(pipeline: pipeline, priority: .low)
        self.lookUpOnFrame = lookUpOnFrame
    }

    func cachedImage(for product: Int) -> Bitmap? {
        lookUpOnFrame ? pipeline.cachedImage(for: requests[product])?.bitmap : nil
    }

    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable {
        TaskHandle(task: pipeline.imageTask(with: requests[product]) { result in
            completion((try? result.get()).map { Payload.bitmap($0.bitmap) })
        })
    }

    func display(_ payload: Payload) -> Bitmap? {
        if case .bitmap(let bitmap) = payload { return bitmap }
        return nil
    }

    func startPrefetching(_ products: [Int]) { prefetcher.startPrefetching(with: products.map { requests[$0] }) }

    func stopPrefetching(_ products: [Int]) { prefetcher.stopPrefetching(with: products.map { requests[$0] }) }

    var decodes: Int { pipeline.statistics.decodes }
    var memoryCost: Int { pipeline.statistics.memoryCost }
    var diskBytes: Int { pipeline.statistics.diskBytes }
}
