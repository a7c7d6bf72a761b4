import BenchmarkSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec
import ImagePipeline
import ImageServer

// The pipeline against its parts called directly and against a plain URLSession loop, measured
// in one run so every figure has its reference beside it. Plain timing (no package-benchmark
// instrumentation, which adds about a microsecond to each call). Medians throughout.
//
// Usage: pipeline-report [SAMPLES-DIR]

let samples = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "../SampleImages")
let server = try await ImageServer.start()
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-report-\(getpid())")
defer { try? FileManager.default.removeItem(at: scratch) }

func photo(_ name: String) throws -> Data { try Data(contentsOf: samples.appendingPathComponent(name)) }

/// A real photo re-encoded at `size` px, for hits where decoding must not dominate.
func small(_ name: String, _ size: Int) throws -> Data {
    try ImageEncoder.jpeg(ImageDecoder(options: DecodingOptions(maxPixelSize: size)).decode(photo(name)))
}

func row(_ name: String, _ ours: Double, _ theirs: Double, unit: String) {
    print("| \(name) | \(String(format: "%.2f", ours)) \(unit) | \(String(format: "%.2f", theirs)) \(unit) | \(String(format: "%.2f×", ours / theirs)) |")
}

// MARK: - Memory hits

let count = 2000
let thumbnail = try small("Kite.jpg", 64)
for index in 0..<count { server.serve("m/\(index).jpg", ImageServer.Resource(data: thumbnail)) }
let memoryPipeline = ImagePipeline(configuration: .init(memoryCacheLimit: 1 << 30))
let requests = (0..<count).map { ImageRequest(url: server.url("m/\($0).jpg"), maxPixelSize: 64) }
for request in requests { _ = try await memoryPipeline.image(for: request) }
let bitmap = try ImageDecoder(options: DecodingOptions(maxPixelSize: 64)).decode(thumbnail)
let direct = MemoryCache<String, Bitmap>(configuration: MemoryCacheConfiguration(costLimit: 1 << 30))
let keys = requests.map { $0.url!.absoluteString }
for key in keys { direct.setValue(bitmap, forKey: key, cost: bitmap.byteCount) }

let directLatency = Measure.latency(samples: 200_000) { precondition(direct.value(forKey: keys[$0 % count]) != nil) }
let cachedLatency = Measure.latency(samples: 200_000) { precondition(memoryPipeline.cachedImage(for: requests[$0 % count]) != nil) }
var asyncTimings: [Double] = []
asyncTimings.reserveCapacity(100_000)
for index in 0..<100_000 {
    let start = Measure.now()
    let response = try await memoryPipeline.image(for: requests[index % count])
    asyncTimings.append(Double(Measure.now() - start))
    precondition(response.source == .memory)
}
let asyncLatency = (p50: Measure.percentile(asyncTimings, 0.5), p99: Measure.percentile(asyncTimings, 0.99))

print("| memory hit (\(count) entries) | through the pipeline | MemoryCache directly (reference) | ratio |")
print("|---|---|---|---|")
row("cachedImage p50", cachedLatency.p50 / 1000, directLatency.p50 / 1000, unit: "µs")
row("cachedImage p99", cachedLatency.p99 / 1000, directLatency.p99 / 1000, unit: "µs")
row("image(for:) async p50", asyncLatency.p50 / 1000, directLatency.p50 / 1000, unit: "µs")
row("image(for:) async p99", asyncLatency.p99 / 1000, directLatency.p99 / 1000, unit: "µs")
print("\nLatencies include reading the clock twice (\(String(format: "%.0f", Measure.clockOverhead)) ns).\n")

// MARK: - Disk hits

let diskCount = 200
let original = try small("LadyBird.jpg", 480)
for index in 0..<diskCount { server.serve("d/\(index).jpg", ImageServer.Resource(data: original)) }
let disk = try DiskCache(directory: scratch.appendingPathComponent("disk"), configuration: DiskCacheConfiguration(sizeLimit: 1 << 30))
// No memory cache to speak of: every request reads the disk and decodes.
let diskPipeline = ImagePipeline(configuration: .init(memoryCacheLimit: 0, diskCache: disk))
let diskRequests = (0..<diskCount).map { ImageRequest(url: server.url("d/\($0).jpg"), maxPixelSize: 200) }
for request in diskRequests { _ = try await diskPipeline.image(for: request) }
var pipelineDisk: [Double] = []
var directDisk: [Double] = []
let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 200))
for round in 0..<10 {
    for (index, request) in diskRequests.enumerated() {
        // Alternating, so both see the same machine.
        if (round + index) % 2 == 0 {
            let start = Measure.now()
            let response = try await diskPipeline.image(for: request)
            pipelineDisk.append(Double(Measure.now() - start))
            precondition(response.source == .disk)
        } else {
            let start = Measure.now()
            let data = try disk.value(forKey: request.url!.absoluteString)!
            _ = try decoder.decode(data)
            directDisk.append(Double(Measure.now() - start))
        }
    }
}
print("| disk hit (480 px JPEG of \(original.count / 1000) KB → 200 px) | through the pipeline | DiskCache + decode directly (reference) | ratio |")
print("|---|---|---|---|")
row("p50", Measure.percentile(pipelineDisk, 0.5) / 1000, Measure.percentile(directDisk, 0.5) / 1000, unit: "µs")
row("p99", Measure.percentile(pipelineDisk, 0.99) / 1000, Measure.percentile(directDisk, 0.99) / 1000, unit: "µs")

// MARK: - Cold loads

let coldNames = ["Elephants-q90.jpg", "Bridge.jpg", "Dragonfly.jpg", "Wine.jpg", "Sunset.jpg", "MilkyWay-q90.jpg"]
let coldPhotos = try coldNames.map(photo)
let coldCount = 24
/// Fresh URLs each time, so nothing is cached anywhere.
func coldURLs() -> [URL] {
    let round = UUID().uuidString
    return (0..<coldCount).map { index in
        let path = "c/\(round)/\(index).jpg"
        server.serve(path, ImageServer.Resource(data: coldPhotos[index % coldPhotos.count]))
        return server.url(path)
    }
}

func pipelineCold() async throws -> Double {
    let pipeline = ImagePipeline()
    let urls = coldURLs()
    let start = Measure.now()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for url in urls { group.addTask { _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 400)) } }
        try await group.waitForAll()
    }
    return Double(coldCount) / (Double(Measure.now() - start) / 1e9)
}

/// The usual loader: URLSession (no cache), decode where the data arrives, 6 at a time as
/// URLSession's per-host limit allows.
func plainCold() async throws -> Double {
    let session = URLSession(configuration: .ephemeral)
    let urls = coldURLs()
    let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 400))
    let start = Measure.now()
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = urls.makeIterator()
        for _ in 0..<6 {
            guard let url = next.next() else { break }
            group.addTask { _ = try decoder.decode(try await session.data(from: url).0) }
        }
        while try await group.next() != nil {
            guard let url = next.next() else { continue }
            group.addTask { _ = try decoder.decode(try await session.data(from: url).0) }
        }
    }
    session.invalidateAndCancel()
    return Double(coldCount) / (Double(Measure.now() - start) / 1e9)
}

var pipelineRates: [Double] = []
var plainRates: [Double] = []
for _ in 0..<5 {
    pipelineRates.append(try await pipelineCold())
    plainRates.append(try await plainCold())
}
print("\n| cold loads (\(coldCount) photos of 8-15 MP → 400 px, loopback) | pipeline | URLSession + decode (reference) | ratio |")
print("|---|---|---|---|")
row("images/s, median of 5", Measure.median(pipelineRates), Measure.median(plainRates), unit: "img/s")
let pipelineRange = Measure.range(pipelineRates), plainRange = Measure.range(plainRates)
print("\nSpread: pipeline \(String(format: "%.1f-%.1f", pipelineRange.min, pipelineRange.max)) img/s, "
      + "reference \(String(format: "%.1f-%.1f", plainRange.min, plainRange.max)) img/s.\n")

// MARK: - Coalescing

func identical(coalescing: Bool) async throws -> (requests: Int, decodes: Int, wall: Double) {
    let pipeline = ImagePipeline(configuration: .init(coalescesRequests: coalescing))
    let url = coldURLs()[0]
    let before = server.statistics.requestsByPath[url.path, default: 0]
    let start = Measure.now()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<20 { group.addTask { _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 400)) } }
        try await group.waitForAll()
    }
    let wall = Double(Measure.now() - start) / 1e6
    return (server.statistics.requestsByPath[url.path, default: 0] - before, pipeline.statistics.decodes, wall)
}

var with: [(requests: Int, decodes: Int, wall: Double)] = []
var without: [(requests: Int, decodes: Int, wall: Double)] = []
for _ in 0..<3 {
    with.append(try await identical(coalescing: true))
    without.append(try await identical(coalescing: false))
}
print("| 20 identical concurrent requests (\(coldNames[0])) | with coalescing | without | ratio |")
print("|---|---|---|---|")
print("| downloads | \(with[0].requests) | \(without[0].requests) | – |")
print("| decodes | \(with[0].decodes) | \(without[0].decodes) | – |")
row("wall, median of 3", Measure.median(with.map(\.wall)), Measure.median(without.map(\.wall)), unit: "ms")

let cachedRatio = cachedLatency.p50 / directLatency.p50
print("\n| target | measured |")
print("|---|---|")
print("| cachedImage hit within 2× of MemoryCache directly | \(String(format: "%.2f×", cachedRatio)) (p50) |")
print("| async memory hit p50 ≤ 10 µs | \(String(format: "%.2f µs", asyncLatency.p50 / 1000)) |")
print("| coalescing: 20 requests → 1 download, 1 decode | \(with[0].requests) download, \(with[0].decodes) decode |")
await server.stop()
