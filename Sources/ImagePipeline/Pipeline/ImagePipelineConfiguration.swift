import Dispatch
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
        /// The largest share of `memoryCacheLimit` one entry may take: a quarter by default, so
        /// one huge image cannot evict a screenful of thumbnails; 1 admits anything up to the
        /// limit, as `NSCache` does.
        public var memoryCacheMaximumEntryFraction: Double
        /// How many times an entry must be stored before the memory cache keeps it
        /// (`MemoryCacheConfiguration.minimumUses`): 1 by default, so a cell shows a reused
        /// image at once; a server whose requests rarely repeat (behind a CDN) sets 2.
        public var memoryCacheMinimumUses = 1
        /// The disk cache for original bytes (and thumbnails); nil keeps everything in memory and
        /// nothing touches the disk.
        public var diskCache: DiskCache?
        /// Where original bytes read from the disk cache are charged, from before the read for as
        /// long as they live (in the memory cache, or with whoever holds them): a server's memory
        /// budget, which its downloads charge too. A read the budget has no room for is refused,
        /// `.network(.overloaded)`, before a byte is read. nil (the default): not counted.
        public var cachedDataMemory: MemoryBudget?
        /// Downloads running at once; more wait, highest priority first.
        public var maximumConcurrentDownloads: Int
        /// Decodes running at once (on their own threads); more wait, highest priority first.
        public var maximumConcurrentDecodes: Int
        /// Bytes the decodes running at once may hold together, by their plans
        /// (`DecodePlan.memoryBytes`): a decode that does not fit beside those running waits
        /// for memory, at its priority; one larger than the whole budget runs alone. By default
        /// an eighth of RAM, between 128 MiB and 1 GiB: two 250 MP decodes no longer run side by
        /// side on a phone.
        public var decodeMemoryLimit: Int
        /// Image requests that may hold an original at once, from the start of its fetch (memory,
        /// disk or network) to the end of its decode; more wait, highest priority first, before
        /// any byte is read. Downloads end faster than decodes, so without it a prefetch of
        /// hundreds of rows would hold every original it fetched while the decodes caught up
        /// (300 originals of 3 MB: 900 MB). nil, the default, is `maximumConcurrentDownloads` +
        /// 2 × `maximumConcurrentDecodes`: enough to keep both busy. A thumbnail service that
        /// bounds its sources' memory itself passes `.max`.
        public var maximumOriginalsHeld: Int?
        /// Bytes of originals and thumbnails waiting to be written to disk; a write that does
        /// not fit is dropped (the image is still delivered, and only the next cold start pays
        /// for it). 64 MiB by default.
        public var maximumPendingDiskWriteBytes: Int
        /// True when the pipeline is a shared cache answering many clients (a thumbnail
        /// service): `private` responses are not stored, `s-maxage` is honoured, and a response
        /// to a request with `Authorization` is stored only when it says it may (RFC 9111 §3.5).
        /// False (a client's private cache) by default.
        public var isSharedCache: Bool
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
        /// JPEGs and WebPs decode at the smallest scale that covers the requested size
        /// (`DecodingOptions.fastShrinkOnLoad`): faster, slightly softer. Off by default. Stored
        /// thumbnails made this way are kept apart from the others.
        public var fastShrinkOnLoad: Bool
        /// How thumbnails stored on disk are encoded (`storesThumbnails`).
        public var thumbnailEncoding: JPEGEncodingOptions
        /// The clock freshness is judged by; inject one in tests.
        public var clock: any CacheClock
        /// Where `ImageTask` completions run (`imageTask(with:completion:)`): a global queue by
        /// default; `.main` for a UI that updates from them.
        public var callbackQueue: DispatchQueue

        /// The default configuration: `URLSessionDataLoader`, `.downsampled`, no disk cache.
        public init(
            dataLoader: any DataLoading = URLSessionDataLoader(), strategy: CacheStrategy = .downsampled,
            storesThumbnails: Bool = false, memoryCacheLimit: Int = MemoryCacheConfiguration.defaultCostLimit,
            memoryCacheMaximumEntryFraction: Double = 0.25,
            diskCache: DiskCache? = nil, maximumConcurrentDownloads: Int = 6,
            maximumConcurrentDecodes: Int = ProcessInfo.processInfo.activeProcessorCount,
            decodeMemoryLimit: Int = Configuration.defaultDecodeMemoryLimit, maximumOriginalsHeld: Int? = nil,
            maximumPendingDiskWriteBytes: Int = 64 << 20,
            isSharedCache: Bool = false, maximumResponseSize: Int = 64 << 20, coalescesRequests: Bool = true,
            heuristicFreshnessLifetime: TimeInterval = 3600, decodingLimits: DecodingLimits = DecodingLimits(),
            colorManagement: ColorManagement = .convertToSRGB, fastShrinkOnLoad: Bool = false,
            thumbnailEncoding: JPEGEncodingOptions = JPEGEncodingOptions(quality: 90), clock: any CacheClock = SystemClock(),
            callbackQueue: DispatchQueue = .global()
        ) {
            self.dataLoader = dataLoader
            self.strategy = strategy
            self.storesThumbnails = storesThumbnails
            self.memoryCacheLimit = memoryCacheLimit
            self.memoryCacheMaximumEntryFraction = memoryCacheMaximumEntryFraction
            self.diskCache = diskCache
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.maximumConcurrentDecodes = maximumConcurrentDecodes
            self.decodeMemoryLimit = decodeMemoryLimit
            self.maximumOriginalsHeld = maximumOriginalsHeld
            self.maximumPendingDiskWriteBytes = maximumPendingDiskWriteBytes
            self.isSharedCache = isSharedCache
            self.maximumResponseSize = maximumResponseSize
            self.coalescesRequests = coalescesRequests
            self.heuristicFreshnessLifetime = heuristicFreshnessLifetime
            self.decodingLimits = decodingLimits
            self.colorManagement = colorManagement
            self.fastShrinkOnLoad = fastShrinkOnLoad
            self.thumbnailEncoding = thumbnailEncoding
            self.clock = clock
            self.callbackQueue = callbackQueue
        }

        /// `maximumOriginalsHeld`, or its default.
        var originalsHeldLimit: Int {
            if let maximumOriginalsHeld { return maximumOriginalsHeld }
            let (decodes, overflowed) = maximumConcurrentDecodes.multipliedReportingOverflow(by: 2)
            let (sum, overflowedAgain) = maximumConcurrentDownloads.addingReportingOverflow(decodes)
            return overflowed || overflowedAgain ? .max : sum
        }

        /// An eighth of physical memory, at least 128 MiB and at most 1 GiB
        /// (`MemoryBudget.defaultDecodeBudget`, which a batch of thumbnails uses too).
        public static var defaultDecodeMemoryLimit: Int { MemoryBudget.defaultDecodeBudget }
    }
}
