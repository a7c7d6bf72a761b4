import Benchmark
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache

/// Memory cache against NSCache, disk cache against URLCache's on-disk store, in one run so
/// the README can give ratios. Batch benchmarks do `batch` operations per iteration.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(2), maxIterations: 2000)
    let batch = 10_000
    let keys = (0..<batch).map { "https://cdn.example.com/products/\($0)/thumbnail.jpg" }
    let nsKeys = keys.map { $0 as NSString }
    let value = Data(count: 64)

    // MARK: Memory: single thread

    let memory = MemoryCache<String, Data>(configuration: MemoryCacheConfiguration(costLimit: 1 << 30))
    let nsCache = NSCache<NSString, NSData>()
    for index in 0..<batch {
        memory.setValue(value, forKey: keys[index])
        nsCache.setObject(value as NSData, forKey: nsKeys[index])
    }
    Benchmark("memory hit ×10k: MemoryCache") { benchmark in
        for _ in benchmark.scaledIterations { for key in keys { blackHole(memory.value(forKey: key)) } }
    }
    Benchmark("memory hit ×10k: NSCache (reference)") { benchmark in
        for _ in benchmark.scaledIterations { for key in nsKeys { blackHole(nsCache.object(forKey: key)) } }
    }
    Benchmark("memory set ×10k: MemoryCache") { benchmark in
        for _ in benchmark.scaledIterations { for key in keys { memory.setValue(value, forKey: key) } }
    }
    Benchmark("memory set ×10k: NSCache (reference)") { benchmark in
        for _ in benchmark.scaledIterations { for key in nsKeys { nsCache.setObject(value as NSData, forKey: key) } }
    }

    // MARK: Memory: two threads on one cache

    Benchmark("memory hit ×10k on each of 2 threads: MemoryCache") { benchmark in
        for _ in benchmark.scaledIterations {
            DispatchQueue.concurrentPerform(iterations: 2) { _ in for key in keys { blackHole(memory.value(forKey: key)) } }
        }
    }
    Benchmark("memory hit ×10k on each of 2 threads: NSCache (reference)") { benchmark in
        for _ in benchmark.scaledIterations {
            DispatchQueue.concurrentPerform(iterations: 2) { _ in for key in nsKeys { blackHole(nsCache.object(forKey: key)) } }
        }
    }

    // MARK: Memory: one hit per iteration, for latency percentiles

    Benchmark("memory single hit latency: MemoryCache", configuration: .init(metrics: [.wallClock], maxIterations: 200_000)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(memory.value(forKey: keys[4242])) }
    }
    Benchmark("memory single hit latency: NSCache (reference)", configuration: .init(metrics: [.wallClock], maxIterations: 200_000)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(nsCache.object(forKey: nsKeys[4242])) }
    }

    // MARK: Disk

    let root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-benchmarks-\(getpid())")
    let body30k = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let filled = root.appendingPathComponent("filled").path
    do {
        let disk = try? DiskCache(directory: filled, configuration: DiskCacheConfiguration(sizeLimit: 1 << 31))
        for index in 0..<10_000 { try? disk?.store(body30k, forKey: keys[index]) }
    }
    Benchmark("disk open with 10,000 entries: DiskCache", configuration: .init(metrics: [.wallClock], maxIterations: 30)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try DiskCache(directory: filled, configuration: DiskCacheConfiguration(sizeLimit: 1 << 31))) }
    }
    let warm = root.appendingPathComponent("warm").path
    let warmCache = try? DiskCache(directory: warm, configuration: DiskCacheConfiguration(sizeLimit: 1 << 30))
    for index in 0..<1000 { try? warmCache?.store(body30k, forKey: keys[index]) }
    Benchmark("disk 30 KB warm hit: DiskCache", configuration: .init(metrics: [.wallClock], maxIterations: 20_000)) { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(try warmCache?.data(forKey: keys[index % 1000]))
            index += 1
        }
    }
    Benchmark("disk 30 KB store: DiskCache", configuration: .init(metrics: [.wallClock], maxIterations: 5000)) { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            try warmCache?.store(body30k, forKey: keys[1000 + index % 5000])
            index += 1
        }
    }

    // URLCache's on-disk store, the reference. It is slow on Linux, so a smaller count.
    let urlCache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 30, directory: root.appendingPathComponent("urlcache"))
    let urlCount = 500
    func request(_ index: Int) -> URLRequest { URLRequest(url: URL(string: keys[index])!) }
    func response(_ index: Int) -> CachedURLResponse {
        let http = HTTPURLResponse(url: URL(string: keys[index])!, statusCode: 200, httpVersion: "HTTP/1.1",
                                   headerFields: ["Content-Type": "image/jpeg", "Cache-Control": "max-age=86400"])!
        return CachedURLResponse(response: http, data: body30k, userInfo: nil, storagePolicy: .allowed)
    }
    Benchmark("disk 30 KB store: URLCache (reference)", configuration: .init(metrics: [.wallClock], maxDuration: .seconds(60), maxIterations: urlCount)) { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            urlCache.storeCachedResponse(response(index % urlCount), for: request(index % urlCount))
            index += 1
        }
    }
    Benchmark("disk 30 KB warm hit: URLCache (reference)", configuration: .init(metrics: [.wallClock], maxDuration: .seconds(30), maxIterations: 2000)) { benchmark in
        let stored = 100
        for index in 0..<stored where urlCache.cachedResponse(for: request(index)) == nil {
            urlCache.storeCachedResponse(response(index), for: request(index))
        }
        benchmark.startMeasurement()
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(urlCache.cachedResponse(for: request(index % stored)))
            index += 1
        }
    }
}
