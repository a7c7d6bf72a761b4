import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import BenchmarkSupport
import ImageCache

// Memory cache against NSCache and disk cache against URLCache's disk store, measured in one
// run so every figure has its reference beside it. Medians throughout.

let keys = (0..<10_000).map { "https://cdn.example.com/products/\($0)/thumbnail.jpg" }
let value = Data(count: 64)
let memory = MemoryCache<String, Data>(configuration: MemoryCacheConfiguration(costLimit: 1 << 30))
let reference = NSCacheReference(keys: keys)
for (key, nsKey) in zip(keys, reference.keys) {
    memory.setValue(value, forKey: key, cost: value.count)
    reference.cache.setObject(value as NSData, forKey: nsKey)
}

func row(_ name: String, _ ours: Double, _ theirs: Double, unit: String, higherIsBetter: Bool) {
    let ratio = higherIsBetter ? ours / theirs : theirs / ours
    print("| \(name) | \(String(format: "%.1f", ours)) \(unit) | \(String(format: "%.1f", theirs)) \(unit) | \(String(format: "%.1f×", ratio)) |")
}

print("| memory cache (10,000 entries) | MemoryCache | NSCache (reference) | advantage |")
print("|---|---|---|---|")
let hit = Measure.nanosecondsPerOperation(operations: keys.count) { for key in keys { _ = memory.value(forKey: key) } }
let nsHit = Measure.nanosecondsPerOperation(operations: keys.count) { for key in reference.keys { _ = reference.cache.object(forKey: key) } }
row("get (hit), 1 thread", 1e3 / hit, 1e3 / nsHit, unit: "M ops/s", higherIsBetter: true)
let set = Measure.nanosecondsPerOperation(operations: keys.count) { for key in keys { memory.setValue(value, forKey: key, cost: value.count) } }
let nsSet = Measure.nanosecondsPerOperation(operations: keys.count) {
    for key in reference.keys { reference.cache.setObject(value as NSData, forKey: key) }
}
row("set (replace), 1 thread", 1e3 / set, 1e3 / nsSet, unit: "M ops/s", higherIsBetter: true)
let contended = Measure.nanosecondsPerOperation(operations: 2 * keys.count) {
    DispatchQueue.concurrentPerform(iterations: 2) { _ in for key in keys { _ = memory.value(forKey: key) } }
}
let nsContended = Measure.nanosecondsPerOperation(operations: 2 * keys.count) {
    DispatchQueue.concurrentPerform(iterations: 2) { _ in for key in reference.keys { _ = reference.cache.object(forKey: key) } }
}
row("get (hit), 2 threads, total", 1e3 / contended, 1e3 / nsContended, unit: "M ops/s", higherIsBetter: true)
print("| get (hit), 2 threads ÷ 1 thread | \(String(format: "%.2f×", hit / contended)) | \(String(format: "%.2f×", nsHit / nsContended)) | – |")
let latency = Measure.latency(samples: 200_000) { _ = memory.value(forKey: keys[$0 % keys.count]) }
let nsLatency = Measure.latency(samples: 200_000) { _ = reference.cache.object(forKey: reference.keys[$0 % keys.count]) }
row("hit latency p50", latency.p50, nsLatency.p50, unit: "ns", higherIsBetter: false)
row("hit latency p99", latency.p99, nsLatency.p99, unit: "ns", higherIsBetter: false)
print("\nLatencies include reading the clock twice (\(String(format: "%.0f", Measure.clockOverhead)) ns).\n")

// Disk.
let root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-report-\(getpid())")
defer { try? FileManager.default.removeItem(at: root) }
let body = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
let filled = root.appendingPathComponent("filled")
let large = DiskCacheConfiguration(sizeLimit: 1 << 31)
var writeTimings: [Double] = []
do {
    let disk = try DiskCache(directory: filled, configuration: large)
    for key in keys {
        let start = Measure.now()
        try disk.setValue(body, forKey: key)
        writeTimings.append(Double(Measure.now() - start))
    }
}
let openTimes = try (0..<7).map { _ in
    let start = Measure.now()
    let disk = try DiskCache(directory: filled, configuration: large)
    let elapsed = Double(Measure.now() - start)
    precondition(disk.statistics.count == keys.count)
    return elapsed
}
let disk = try DiskCache(directory: filled, configuration: large)
let diskHit = Measure.latency(samples: 20_000) { precondition(try! disk.value(forKey: keys[$0 % 1000]) == body) }
// With synchronizesWrites every store flushes the entry, entries/ and the journal to the device.
let synchronized = try DiskCache(directory: root.appendingPathComponent("synchronized"),
                                 configuration: DiskCacheConfiguration(sizeLimit: 1 << 31, synchronizesWrites: true))
let synchronizedWrites = Measure.latency(samples: 300) { try! synchronized.setValue(body, forKey: keys[$0]) }

let urlCount = 500
let urlCache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 30, diskPath: root.appendingPathComponent("urlcache").path)
func request(_ index: Int) -> URLRequest { URLRequest(url: URL(string: keys[index])!) }
let urlWrites = Measure.latency(samples: urlCount) { index in
    let response = HTTPURLResponse(url: URL(string: keys[index])!, statusCode: 200, httpVersion: "HTTP/1.1",
                                   headerFields: ["Content-Type": "image/jpeg", "Cache-Control": "max-age=86400"])!
    urlCache.storeCachedResponse(CachedURLResponse(response: response, data: body), for: request(index))
}
let urlHit = Measure.latency(samples: 1000) { index in
    precondition(urlCache.cachedResponse(for: request(index % urlCount))?.data.count == body.count)
}
print("| disk cache, 30 KB entries | DiskCache | URLCache disk (reference) | advantage |")
print("|---|---|---|---|")
row("store p50", Measure.median(writeTimings) / 1000, urlWrites.p50 / 1000, unit: "µs", higherIsBetter: false)
row("store p50, synchronizesWrites", synchronizedWrites.p50 / 1000, urlWrites.p50 / 1000, unit: "µs", higherIsBetter: false)
row("warm hit p50", diskHit.p50 / 1000, urlHit.p50 / 1000, unit: "µs", higherIsBetter: false)
row("warm hit p99", diskHit.p99 / 1000, urlHit.p99 / 1000, unit: "µs", higherIsBetter: false)
print("| open with 10,000 entries | \(String(format: "%.1f", Measure.median(openTimes) / 1e6)) ms | – | – |")
print("\nDiskCache: 10,000 entries; URLCache: \(urlCount) entries (it is too slow on Linux for more).")
