import Foundation
@testable import ImageService
import Testing

@Suite("Service: result cache cost")
struct ResultCacheCostTests {
    @Test("an entry is charged for its key too: 8 KiB keys on 69-byte results fill the memory limit at a dozen entries, not 1,400")
    func keysAreCharged() {
        let cache = ResultCache(memoryLimit: 100_000, disk: nil, lifetime: 3600, onDiskError: {})
        let image = RenderedImage(
            body: Data(repeating: 7, count: 69), contentType: "image/jpeg", etag: "\"0123456789abcdef\"",
            lastModified: nil, sourceHasAlpha: false, timing: PhaseTiming())
        for index in 0..<200 {
            let key = String(format: "%05d", index) + String(repeating: "k", count: 8 << 10)
            cache.store(image, forKey: key)
        }
        #expect(ResultCache.cost(of: image, key: String(repeating: "k", count: 8 << 10)) > 8 << 10)
        #expect(cache.counts.memory <= 100_000 / (8 << 10), "\(cache.counts.memory) entries held")
        #expect(cache.counts.memory >= 1)
    }

    @Test("an entry is charged for the bytes it holds: 17 KB results fill 1 MiB at 60, not more")
    func storageIsCharged() {
        let body = Data(repeating: 7, count: 17_000)
        let image = RenderedImage(
            body: body, contentType: "image/jpeg", etag: "\"0123456789abcdef\"", lastModified: nil, sourceHasAlpha: false,
            timing: PhaseTiming())
        #expect(ResultCache.cost(of: image, key: "k") >= body.count)
        let cache = ResultCache(memoryLimit: 1 << 20, disk: nil, lifetime: 3600, onDiskError: {})
        for index in 0..<200 { cache.store(image, forKey: "k\(index)") }
        #expect(cache.counts.memory * body.count <= 1 << 20, "\(cache.counts.memory) entries of \(body.count) bytes held")
        #expect(cache.counts.memory >= 50)
    }
}
