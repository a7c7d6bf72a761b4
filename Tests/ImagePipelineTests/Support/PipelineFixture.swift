import Foundation
import ImageCache
import ImageCodec
import ImagePipeline
import ImageServer
import Testing
import TestSupport

/// A loopback server serving sample photos, and pipelines pointed at it.
struct PipelineFixture {
    let server: ImageServer
    let directory: TemporaryDirectory

    /// Photos served, by path (`SmallPhotos`).
    static let photos: [String: Data] = Dictionary(
        uniqueKeysWithValues: SmallPhotos.names.compactMap { name in
            (try? SmallPhotos.data(name)).map { (name, $0) }
        })

    static func start(
        throttle: ImageServer.Throttle? = nil, cacheControl: String? = "max-age=3600",
        clock: any CacheClock = SystemClock()
    ) async throws -> PipelineFixture {
        let server = try await ImageServer.start(throttle: throttle, now: { clock.now })
        for path in ["kite.jpg", "ladybird.jpg", "grey.jpg", "calla.png"] {
            let data = try #require(photos[path], "sample photo \(path) could not be prepared")
            server.serve(
                path,
                ImageServer.Resource(
                    data: data, contentType: path.hasSuffix(".png") ? "image/png" : "image/jpeg",
                    lastModified: Date(timeIntervalSince1970: 1_700_000_000), cacheControl: cacheControl))
        }
        return PipelineFixture(server: server, directory: try TemporaryDirectory())
    }

    func url(_ path: String) -> URL { server.url(path) }

    /// A disk cache in the fixture's directory (one per name: the directory is locked while open).
    func diskCache(_ name: String = "disk") throws -> DiskCache {
        try DiskCache(directory: directory.url.appendingPathComponent(name))
    }

    /// The disk cache, once the pipeline that had it open before is gone (its last tasks may
    /// hold it for a moment after their results were delivered).
    func diskCacheWhenFree(_ name: String = "disk") async throws -> DiskCache {
        for _ in 0..<500 {
            do throws(DiskCacheError) {
                return try DiskCache(directory: directory.url.appendingPathComponent(name))
            } catch .locked {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        return try diskCache(name)
    }

    /// A pipeline loading from the server with short timeouts.
    func pipeline(
        strategy: ImagePipeline.CacheStrategy = .downsampled, disk: DiskCache? = nil, storesThumbnails: Bool = false,
        coalesces: Bool = true, maximumResponseSize: Int = 64 << 20, timeout: TimeInterval = 30,
        clock: any CacheClock = SystemClock(), configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration(
            dataLoader: URLSessionDataLoader(configuration: .init(connectTimeout: timeout, idleTimeout: timeout, requestTimeout: timeout)),
            strategy: strategy, storesThumbnails: storesThumbnails, memoryCacheLimit: 256 << 20, diskCache: disk,
            maximumResponseSize: maximumResponseSize, coalescesRequests: coalesces, clock: clock)
        configure(&configuration)
        return ImagePipeline(configuration: configuration)
    }

    /// The photo decoded directly, for comparing pixels.
    static func expected(_ path: String, maxPixelSize: Int?) throws -> Bitmap {
        try ImageDecoder(options: DecodingOptions(maxPixelSize: maxPixelSize)).decode(try #require(photos[path]))
    }
}

/// A clock the test moves by hand.
final class ManualClock: CacheClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date()

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}
