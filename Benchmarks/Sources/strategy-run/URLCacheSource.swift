import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCodec

/// S1: the usual `ImageLoader`: look in a URLCache (memory and disk), else download with
/// URLSession and store the response there; every display decodes the image again, as
/// `UIImage(data:)` does. (URLSession on Linux does not fill a configured URLCache itself, so
/// the loader stores explicitly, as most image loaders do anyway.) `decodesOnFrame`: where a
/// `UIImage(data:)` client pays, at first display; otherwise on the decode queue. `resize`
/// nil decodes full size; S1↓ decodes at the cell's size (the display-size advice). A display
/// load and a prefetch of one product share one lookup and one download.
final class URLCacheSource: GridImageSource, @unchecked Sendable {
    private let urls: [URL]
    private let cache: URLCache
    private let session = URLSession(configuration: .ephemeral)
    private let decodesOnFrame: Bool
    private let decoder: BaselineDecoder
    private let loads = InFlightLoads<Data>()
    private let storing = DispatchQueue(label: "URLCacheSource.storing", qos: .utility)
    private let prefetches = PrefetchTasks()

    init(urls: [URL], memoryLimit: Int, directory: URL, decodesOnFrame: Bool, resize: Resize? = nil) {
        self.urls = urls
        self.decodesOnFrame = decodesOnFrame
        decoder = BaselineDecoder(resize: resize)
        cache = URLCache(memoryCapacity: memoryLimit, diskCapacity: 1 << 30, diskPath: directory.path)
    }

    func cachedImage(for product: Int) -> Bitmap? {
        guard decodesOnFrame, let response = cache.cachedResponse(for: URLRequest(url: urls[product])) else { return nil }
        return decoder.decode(response.data)
    }

    /// The product's bytes: from the URLCache, looked up off the frame thread, else downloaded
    /// and stored there.
    private func bytes(_ product: Int, lowPriority: Bool, _ completion: @escaping @Sendable (Data?) -> Void) -> any Cancellable {
        loads.subscribe(product, start: { finish in
            let request = URLRequest(url: urls[product])
            let work = DeferredTask()
            DispatchQueue.global().async { [self] in
                if let cached = cache.cachedResponse(for: request) { return finish(cached.data) }
                guard !work.isCancelled else { return finish(nil) }
                let task = session.dataTask(with: request) { [cache, storing] data, response, _ in
                    work.downloadFinished()
                    guard let data, let response = response as? HTTPURLResponse, response.statusCode == 200 else { return finish(nil) }
                    // Deliver first, store after on a queue of its own, as URLSession does (on
                    // Linux a store writes the file, and on the delegate queue it held up every
                    // later completion).
                    finish(data)
                    storing.async {
                        cache.storeCachedResponse(CachedURLResponse(response: response, data: data), for: request)
                    }
                }
                if lowPriority { task.priority = URLSessionTask.lowPriority }
                work.start(task)
            }
            return work
        }, completion: completion)
    }

    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable {
        if decodesOnFrame { return bytes(product, lowPriority: false) { completion($0.map(Payload.encoded)) } }
        let display = DeferredTask()
        display.part = bytes(product, lowPriority: false) { [decoder] data in
            guard let data else { return completion(nil) }
            decoder.decode(data, forDisplay: true, unless: display) { completion($0.map(Payload.bitmap)) }
        }
        return display
    }

    func display(_ payload: Payload) -> Bitmap? {
        switch payload {
        case .bitmap(let bitmap): bitmap
        case .encoded(let data): decoder.decode(data)
        }
    }

    func startPrefetching(_ products: [Int]) {
        for product in products {
            prefetches.start(product) { bytes(product, lowPriority: true) { [prefetches] _ in prefetches.finished(product) } }
        }
    }

    func stopPrefetching(_ products: [Int]) { prefetches.cancel(products) }

    var decodes: Int { decoder.value }
    var memoryCost: Int { cache.currentMemoryUsage }
    var diskBytes: Int { cache.currentDiskUsage }
}
