import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCodec
import Synchronization

/// S2: an NSCache of decoded bitmaps (cost = bytes), filled by URLSession downloads decoded on
/// the decode queue; full size, or at the cell's size with `resize` (S2↓, the standard app
/// advice). No disk tier. A display load and a prefetch of one product share one download and
/// one decode.
final class NSCacheSource: NSObject, GridImageSource, NSCacheDelegate, @unchecked Sendable {
    final class Box {
        let bitmap: Bitmap
        init(_ bitmap: Bitmap) { self.bitmap = bitmap }
    }

    private let urls: [URL]
    private let cache = NSCache<NSNumber, Box>()
    private let session = URLSession(configuration: .ephemeral)
    private let decoder: BaselineDecoder
    private let loads = InFlightLoads<Bitmap>()
    private let prefetches = PrefetchTasks()
    private let cost = Atomic<Int>(0)

    init(urls: [URL], memoryLimit: Int, resize: Resize? = nil) {
        self.urls = urls
        decoder = BaselineDecoder(resize: resize)
        super.init()
        cache.totalCostLimit = memoryLimit
        cache.delegate = self
    }

    func cache(_ cache: NSCache<AnyObject, AnyObject>, willEvictObject object: Any) {
        if let box = object as? Box { cost.wrappingSubtract(box.bitmap.byteCount, ordering: .relaxed) }
    }

    func cachedImage(for product: Int) -> Bitmap? { cache.object(forKey: NSNumber(value: product))?.bitmap }

    private func fetch(_ product: Int, forDisplay: Bool, _ completion: @escaping @Sendable (Bitmap?) -> Void) -> any Cancellable {
        loads.subscribe(product, start: { finish in
            let work = DeferredTask()
            let task = session.dataTask(with: urls[product]) { [self] data, response, _ in
                work.downloadFinished()
                guard let data, (response as? HTTPURLResponse)?.statusCode == 200 else { return finish(nil) }
                decoder.decode(data, forDisplay: forDisplay, unless: work) { [self] bitmap in
                    if let bitmap {
                        cost.wrappingAdd(bitmap.byteCount, ordering: .relaxed)
                        cache.setObject(Box(bitmap), forKey: NSNumber(value: product), cost: bitmap.byteCount)
                    }
                    finish(bitmap)
                }
            }
            if !forDisplay { task.priority = URLSessionTask.lowPriority }
            work.start(task)
            return work
        }, completion: completion)
    }

    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable {
        fetch(product, forDisplay: true) { completion($0.map(Payload.bitmap)) }
    }

    func startPrefetching(_ products: [Int]) {
        for product in products where cachedImage(for: product) == nil {
            prefetches.start(product) { fetch(product, forDisplay: false) { [prefetches] _ in prefetches.finished(product) } }
        }
    }

    func stopPrefetching(_ products: [Int]) { prefetches.cancel(products) }

    var decodes: Int { decoder.value }
    var memoryCost: Int { cost.load(ordering: .relaxed) }
    var diskBytes: Int { 0 }
}
