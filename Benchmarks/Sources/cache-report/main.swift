import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import BenchmarkSupport
import ImageCache

// Memory cache against NSCache and disk cache against URLCache's disk store, measured in one
// run so every figure has its reference beside it. Medians throughout.

let keys = (0..<10_000).map { "https://cdn.example.com/products/\($0)/thumbnail.jpg" }
// One value object per key, as a cache of thumbnails holds: with one shared value, every hit on
// every thread would retain and release the same object, and the threads would measure that.
let values = keys.indices.map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }
let objects = values.map { $0 as NSData }
let memory = MemoryCache<String, Data>(configuration: MemoryCacheConfiguration(costLimit: 1 << 30))
let reference = NSCacheReference(keys: keys)
for index in keys.indices {
    memory.setValue(values[index], forKey: keys[index], cost: values[index].count)
    reference.cache.setObject(objects[index], forKey: reference.keys[index])
}

func row(_ name: String, _ ours: Double, _ theirs: Double, unit: String, higherIsBetter: Bool) {
    let ratio = higherIsBetter ? ours / theirs : theirs / ours
    print("| \(name) | \(String(format: "%.1f", ours)) \(unit) | \(String(format: "%.1f", theirs)) \(unit) | \(String(format: "%.1f×", ratio)) |")
}

print("| memory cache (10,000 entries) | MemoryCache | NSCache (reference) | advantage |")
print("|---|---|---|---|")
// Each round reads every key `passes` times (a round of one pass lasts ~2 ms, shorter than the
// scheduler's noise on this VM), after one warm-up round.
let passes = 10
/// Every key `passes` times, starting at `offset`: two threads start half the keys apart, as
/// two cells would, instead of contending for the same shard in lockstep.
func readAll<K>(_ keys: [K], offset: Int = 0, _ read: (K) -> Void) {
    for _ in 0..<passes {
        for index in 0..<keys.count { read(keys[(index + offset) % keys.count]) }
    }
}
readAll(keys) { _ = memory.value(forKey: $0) }
readAll(reference.keys) { _ = reference.cache.object(forKey: $0) }
let hit = Measure.nanosecondsPerOperation(operations: passes * keys.count) { readAll(keys) { _ = memory.value(forKey: $0) } }
let nsHit = Measure.nanosecondsPerOperation(operations: passes * keys.count) { readAll(reference.keys) { _ = reference.cache.object(forKey: $0) } }
row("get (hit), 1 thread", 1e3 / hit, 1e3 / nsHit, unit: "M ops/s", higherIsBetter: true)
let set = Measure.nanosecondsPerOperation(operations: keys.count) {
    for index in keys.indices { memory.setValue(values[index], forKey: keys[index], cost: values[index].count) }
}
let nsSet = Measure.nanosecondsPerOperation(operations: keys.count) {
    for index in keys.indices { reference.cache.setObject(objects[index], forKey: reference.keys[index]) }
}
row("set (replace), 1 thread", 1e3 / set, 1e3 / nsSet, unit: "M ops/s", higherIsBetter: true)
// One thread and two threads alternate round by round, so that both see the same machine: this
// VM's speed drifts by 2× over seconds, which would otherwise decide the scaling figure.
func scaling(_ read: @escaping @Sendable (Int, Int) -> Void) -> (single: Double, double: Double, ratio: Double) {
    var single: [Double] = [], double: [Double] = [], ratios: [Double] = []
    for _ in 0..<15 {
        let one = Measure.nanosecondsPerOperation(rounds: 1, operations: passes * keys.count) { read(0, 0) }
        let two = Measure.nanosecondsPerOperation(rounds: 1, operations: 2 * passes * keys.count) {
            DispatchQueue.concurrentPerform(iterations: 2) { thread in read(thread, thread * keys.count / 2) }
        }
        single.append(one)
        double.append(two)
        ratios.append(one / two)
    }
    return (Measure.median(single), Measure.median(double), Measure.median(ratios))
}
// The ceiling: each thread reads a cache of its own, so the threads share nothing but the
// machine (and the key strings, read-only).
let second = MemoryCache<String, Data>(configuration: MemoryCacheConfiguration(costLimit: 1 << 30))
for index in keys.indices { second.setValue(Data(values[index]), forKey: keys[index], cost: values[index].count) }
let separate = scaling { thread, offset in
    let cache = thread == 0 ? memory : second
    readAll(keys, offset: offset) { _ = cache.value(forKey: $0) }
}
let ours = scaling { _, offset in readAll(keys, offset: offset) { _ = memory.value(forKey: $0) } }
let theirs = scaling { _, offset in readAll(reference.keys, offset: offset) { _ = reference.cache.object(forKey: $0) } }
row("get (hit), 2 threads, total", 1e3 / ours.double, 1e3 / theirs.double, unit: "M ops/s", higherIsBetter: true)
print("| get (hit), 2 threads ÷ 1 thread, alternating rounds | \(String(format: "%.2f×", ours.ratio)) | \(String(format: "%.2f×", theirs.ratio)) | – |")
print("| the same, each thread on a cache of its own (the machine's ceiling) | \(String(format: "%.2f×", separate.ratio)) | – | – |")
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
