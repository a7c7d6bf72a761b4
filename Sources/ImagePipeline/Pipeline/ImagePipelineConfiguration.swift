import Foundation
import ImageCache
import ImageCodec

extension ImagePipeline {
    /// What the memory cache holds; the disk (when configured) always holds the original bytes.
    public enum CacheStrategy: String, Sendable, Hashable, CaseIterable, Codable {
        /// The original bytes in memory (and on disk): every display decodes them again, as a
        /// client caching HTTP responses (`URLCache`) does.
        case encodedResponse
        /// Full-size decoded bitmaps in memory: a hit costs nothing, but a 12 MP photo takes
        /// 36-48 MB. The bitmap returned is full size whatever `resize` asks (the view
        /// scales it), as with an `NSCache` of images.
        case decoded
        /// Bitmaps decoded at the request's `resize` (cropped while decoding for a fill), keyed by
        /// it: a hit costs
        /// nothing and a 400 px thumbnail takes 0.5 MB. The default.
        case downsampled
    }

    /// Value-type configuration of a pipeline.
    public struct Configuration: Sendable {
        /// Where bytes come from; inject a double in tests.
        public var dataLoader: any DataLoading
        /// What the memory cache holds: responses, full-size bitmaps or bitmaps at the requested size.
        public var strategy: CacheStrategy
        /// With `.downsampled` and a disk cache, also store each decoded thumbnail (JPEG, or PNG
        /// with alpha) on disk, so a cold start decodes a small file instead of the original.
        public var storesThumbnails: Bool
        /// Bytes the memory cache may hold (bitmaps count `Bitmap.byteCount`, encoded data its
        /// size). By default 15% of RAM, at most 512 MiB.
        public var memoryCacheLimit: Int
        /// The disk cache for original bytes (and thumbnails); nil keeps everything in memory and
        /// nothing touches the disk.
        public var diskCache: DiskCache?
        /// Downloads running at once; more wait, highest priority first.
        public var maximumConcurrentDownloads: Int
        /// Decodes running at once (on their own threads); more wait, highest priority first.
        public var maximumConcurrentDecodes: Int
        /// Largest response body accepted, enforced while receiving.
        public var maximumResponseSize: Int
        /// Identical requests in flight share one download and one decode. Off only to measure
        /// what that saves.
        public var coalescesRequests: Bool
        /// Freshness of a response with no `Cache-Control: max-age`, no `Expires` and no
        /// `Last-Modified` (RFC 9111 §4.2.2 leaves the heuristic to the cache).
        public var heuristicFreshnessLifetime: TimeInterval
        /// Ceilings checked before any large allocation.
        public var decodingLimits: DecodingLimits
        /// Bitmaps in sRGB (the default) or in the source's colour space with its profile.
        public var colorManagement: ColorManagement
        /// How thumbnails stored on disk are encoded (`storesThumbnails`).
        public var thumbnailEncoding: JPEGEncodingOptions
        /// The clock freshness is judged by; inject one in tests.
        public var clock: any CacheClock

        /// The default configuration: `URLSessionDataLoader`, `.downsampled`, no disk cache.
        public init(
            dataLoader: any DataLoading = URLSessionDataLoader(), strategy: CacheStrategy = .downsampled,
            storesThumbnails: Bool = false, memoryCacheLimit: Int = MemoryCacheConfiguration.defaultCostLimit,
            diskCache: DiskCache? = nil, maximumConcurrentDownloads: Int = 6,
            maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount,
            maximumResponseSize: Int = 64 << 20, coalescesRequests: Bool = true,
            heuristicFreshnessLifetime: TimeInterval = 3600, decodingLimits: DecodingLimits = DecodingLimits(),
            colorManagement: ColorManagement = .convertToSRGB,
            thumbnailEncoding: JPEGEncodingOptions = JPEGEncodingOptions(quality: 90), clock: any CacheClock = SystemClock()
        ) {
            self.dataLoader = dataLoader
            self.strategy = strategy
            self.storesThumbnails = storesThumbnails
            self.memoryCacheLimit = memoryCacheLimit
            self.diskCache = diskCache
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.maximumConcurrentDecodes = maximumConcurrentDecodes
            self.maximumResponseSize = maximumResponseSize
            self.coalescesRequests = coalescesRequests
            self.heuristicFreshnessLifetime = heuristicFreshnessLifetime
            self.decodingLimits = decodingLimits
            self.colorManagement = colorManagement
            self.thumbnailEncoding = thumbnailEncoding
            self.clock = clock
        }
    }
}
