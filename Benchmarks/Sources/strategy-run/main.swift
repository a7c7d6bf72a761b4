import BenchmarkSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec
import ImagePipeline

// One strategy, one memory limit, one network, over the scroll trace, in a process of its own;
// writes one JSON record. Driven by Benchmarks/scripts/strategies.py.
//
// strategy-run --strategy S1|S1-off|S1-down|S2|S2-down|S3|S3-off|S4|S5|S5-fit|S5-serial|S6|S7|S7-cold|S7-cold-fast|
//                         S7-webp|S7-avif
//              --port PORT --memory-mib N --cache-dir DIR
//              --output FILE [--products 120] [--no-prefetch] [--no-cancel | --park-scrolled-off] [--label TEXT]
//              [--origin-port PORT]   (S7: where the thumbnail service fetches the originals)

func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("strategy-run: \(message)\n".utf8))
    exit(64)
}

func required(_ name: String) -> String {
    guard let value = option(name) else { fail("\(name) is required") }
    return value
}

let strategy = required("--strategy")
guard let port = Int(required("--port")) else { fail("--port must be a number") }
let memoryLimit = (option("--memory-mib").flatMap(Int.init) ?? 128) << 20
let cacheDirectory = URL(fileURLWithPath: required("--cache-dir"), isDirectory: true)
let output = required("--output")
let products = option("--products").flatMap(Int.init) ?? 120
var options = FrameLoop.Options()
options.prefetches = !CommandLine.arguments.contains("--no-prefetch")
options.cancels = !CommandLine.arguments.contains("--no-cancel")
// The engine's strategies only: scrolled-off requests parked (ScrolledOffTasks), not cancelled.
options.parks = CommandLine.arguments.contains("--park-scrolled-off")

let server = URL(string: "http://127.0.0.1:\(port)")!
let urls = (0..<products).map { server.appendingPathComponent(String(format: "products/%03d.jpg", $0)) }

/// S7's origin: the port `--origin-port` names; a usage error without it.
func originPort() -> Int {
    guard let port = option("--origin-port").flatMap(Int.init) else { fail("S7 needs --origin-port") }
    return port
}

/// S7: each cell's thumbnail from `image-engine serve` (unsigned, --unsafe), filled to the
/// 400 px cell, the service fetching the original from the origin server; `format` is the
/// URL's extension, which chooses the thumbnail's format (serve's default quality for each).
func thumbnailURLs(originPort: Int, format: String = "jpg") -> [URL] {
    (0..<products).map { product in
        let source = String(format: "http://127.0.0.1:%d/products/%03d.jpg", originPort, product)
        let encoded = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return URL(string: "\(server.absoluteString)/unsafe/rs:fill:400:400/\(encoded).\(format)")!
    }
}

/// GET on the image server's control endpoint, synchronously (before and after the run).
func control(_ path: String) -> Data {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var body = Data()
    URLSession.shared.dataTask(with: server.appendingPathComponent("_control/" + path)) { data, _, _ in
        body = data ?? Data()
        done.signal()
    }.resume()
    done.wait()
    return body
}

func engine(_ strategy: ImagePipeline.CacheStrategy, thumbnails: Bool = false, lookUpOnFrame: Bool = true,
            sourceURLs: [URL]? = nil, decodes: Int = ProcessInfo.processInfo.activeProcessorCount,
            resize: Resize = cellResize, entryFraction: Double = 0.25) -> EngineSource {
    let disk: DiskCache
    do {
        disk = try DiskCache(directory: cacheDirectory.appendingPathComponent("engine"), configuration: DiskCacheConfiguration(sizeLimit: 1 << 30))
    } catch {
        fail("cannot open the disk cache: \(error)")
    }
    return EngineSource(urls: sourceURLs ?? urls, configuration: .init(strategy: strategy, storesThumbnails: thumbnails, memoryCacheLimit: memoryLimit,
                                                         memoryCacheMaximumEntryFraction: entryFraction,
                                                         diskCache: disk, maximumConcurrentDecodes: decodes),
                        lookUpOnFrame: lookUpOnFrame, resize: resize)
}

let source: any GridImageSource = switch strategy {
case "S1": URLCacheSource(urls: urls, memoryLimit: memoryLimit, directory: cacheDirectory.appendingPathComponent("urlcache"), decodesOnFrame: true)
case "S1-off": URLCacheSource(urls: urls, memoryLimit: memoryLimit, directory: cacheDirectory.appendingPathComponent("urlcache"), decodesOnFrame: false)
case "S1-down": URLCacheSource(urls: urls, memoryLimit: memoryLimit, directory: cacheDirectory.appendingPathComponent("urlcache"),
                               decodesOnFrame: false, resize: cellResize)
case "S2": NSCacheSource(urls: urls, memoryLimit: memoryLimit)
case "S2-down": NSCacheSource(urls: urls, memoryLimit: memoryLimit, resize: cellResize)
case "S3": engine(.encodedResponse)
case "S3-off": engine(.encodedResponse, lookUpOnFrame: false)
// Full-size bitmaps admitted as S2's NSCache admits them (anything up to the whole limit), so
// S4 → S5 measures downsampling alone, not the engine's per-entry cap (a quarter of the limit)
// as well.
case "S4": engine(.decoded, entryFraction: 1)
case "S5": engine(.downsampled)
// Before cells were aspect-fill squares: the longest side 400 (a 4:3 photo 400×300).
case "S5-fit": engine(.downsampled, resize: .maxPixelSize(400))
// Nuke's default: one decode at a time, against the engine's one per core.
case "S5-serial": engine(.downsampled, decodes: 1)
case "S6": engine(.downsampled, thumbnails: true)
case "S7", "S7-cold", "S7-cold-fast": engine(.downsampled, sourceURLs: thumbnailURLs(originPort: originPort()))
case "S7-webp": engine(.downsampled, sourceURLs: thumbnailURLs(originPort: originPort(), format: "webp"))
case "S7-avif": engine(.downsampled, sourceURLs: thumbnailURLs(originPort: originPort(), format: "avif"))
default: fail("unknown strategy \(strategy)")
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func peakResidentMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

_ = control("reset")
let cpuBefore = cpuSeconds()
let grid = Grid(products: products)
let result = FrameLoop(grid: grid, trace: ScrollTrace(grid: grid), source: source, options: options).run()
// Let cancelled work wind down before the server's counters are read.
Thread.sleep(forTimeInterval: 0.3)
let serverStatistics = (try? JSONSerialization.jsonObject(with: control("stats"))) ?? [:]

struct Record: Encodable {
    var strategy: String
    var memoryLimitMiB: Int
    var prefetch: Bool
    var cancellation: Bool
    var parksScrolledOff: Bool
    var peakResidentMiB: Double
    var peakMemoryCacheMiB: Double
    var memoryCacheMiBAtEnd: Double
    var diskMiBAtEnd: Double
    var cpuSeconds: Double
    var decodes: Int
    var serverRequests: Int
    var serverMiBSent: Double
    var serverAbortedResponses: Int
    var frameLoop: FrameLoop.Result
}

let statistics = serverStatistics as? [String: Any] ?? [:]
let record = Record(
    strategy: strategy, memoryLimitMiB: memoryLimit >> 20, prefetch: options.prefetches, cancellation: options.cancels,
    parksScrolledOff: options.parks,
    peakResidentMiB: peakResidentMiB(), peakMemoryCacheMiB: result.memory.map { $0[2] }.max() ?? 0,
    memoryCacheMiBAtEnd: Double(source.memoryCost) / 1_048_576, diskMiBAtEnd: Double(source.diskBytes) / 1_048_576,
    cpuSeconds: cpuSeconds() - cpuBefore, decodes: source.decodes,
    serverRequests: statistics["requests"] as? Int ?? -1, serverMiBSent: Double(statistics["bytesSent"] as? Int ?? -1) / 1_048_576,
    serverAbortedResponses: statistics["abortedResponses"] as? Int ?? -1, frameLoop: result)
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
do {
    try encoder.encode(record).write(to: URL(fileURLWithPath: output))
} catch {
    fail("cannot write \(output): \(error)")
}
