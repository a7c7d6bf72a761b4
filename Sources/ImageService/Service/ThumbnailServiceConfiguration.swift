import URLSigning
import Foundation
import ImageCodec

extension ThumbnailService {
    /// Value-type configuration of a thumbnail service; the defaults are `image-engine serve`'s.
    public struct Configuration: Sendable {
        /// Keys accepted for signatures (the first signs); empty with `requiresSignature` refuses
        /// every request.
        public var keys: [SigningKey]
        /// False (`--unsafe`): the signature segment is ignored, whatever it holds.
        public var requiresSignature: Bool
        /// Bytes of HMAC a signature carries (`IMAGE_ENGINE_SIGNATURE_SIZE`, 1-32; 32 by default).
        public var signatureSize: Int = 32
        /// Which sources may be fetched, and from which addresses.
        public var sourcePolicy: SourcePolicy
        /// Decodes + encodes running at once; by default one per core.
        public var workers: Int
        /// Requests waiting for a worker before more are refused with 429; by default 32 per worker.
        public var queueLimit: Int
        /// Bytes held at once for requests (`--max-memory`): source bodies being downloaded or
        /// waiting for a worker, and the planned memory of the decodes admitted
        /// (`DecodePlan.memoryBytes`). A request that does not fit now is refused with 429; one
        /// whose decode alone needs more, with 422.
        public var memoryBudget: Int
        /// Largest source body, enforced while it streams in.
        public var maxSourceBytes: Int
        /// Largest source width × height, read from its header before anything is decoded.
        public var maxSourcePixels: Int
        /// Seconds a source fetch may take, redirects included.
        public var downloadTimeout: TimeInterval
        /// Longest side of an output, in pixels (after `dpr`).
        public var maxOutputSide: Int
        /// Longest request path accepted (414 beyond it).
        public var maxPathLength: Int
        /// `Cache-Control: public, max-age` of a result, in seconds; results are cached as long.
        public var timeToLive: Int
        /// JPEG quality when the URL does not say.
        public var defaultQuality: Int
        /// Where the source and result disk caches live (`sources/` and `results/` inside); nil
        /// keeps everything in memory.
        public var cacheDirectory: URL?
        /// Bytes the disk caches may hold together: three quarters for sources, one for results.
        public var cacheSize: Int
        /// Bytes `image-engine serve` keeps in memory by default, half finished thumbnails and half
        /// sources. Small on purpose: under a load of new URLs (the usual case behind nginx or a
        /// CDN, which answer the repeats) every entry is written once and never read again, so a
        /// larger cache is only resident memory. Under such a load (new 1600-3000 px JPEGs to
        /// 512 px), 8 MiB peaks at 77-83 MB of PSS against 116-122 MB for 32 MiB, at the same
        /// throughput; 192 MiB cost 280 MB. A source over a quarter of its half (1 MiB) is not
        /// kept in memory: repeats of large sources are what `--cache-dir` is for.
        public static let defaultMemoryCache = 8 << 20
        /// Bytes of finished thumbnails kept in memory.
        public var resultMemoryLimit: Int
        /// Bytes of source images kept in memory (so several sizes of one photo fetch it once).
        public var sourceMemoryLimit: Int
        /// How many times a result or a source must be made (rendered, downloaded) before the
        /// memory caches keep it (`--memory-cache-min-uses`, as nginx's `proxy_cache_min_uses`;
        /// `MemoryCacheConfiguration.minimumUses`). 2 by default: behind nginx or a CDN nearly
        /// every request the service sees is a URL's first, and caching each one only made
        /// resident memory (under new 1600-3000 px JPEGs to 512 px, the 8 MiB of caches held
        /// 17 MB of PSS, a quarter of the process). A URL asked for twice is cached from its
        /// second render on; the disk cache, where there is one, keeps every result at once.
        public var memoryCacheMinimumUses = 2
        /// Source downloads running at once (`--max-downloads`); more wait, without holding a worker.
        public var maximumConcurrentDownloads: Int
        /// Source downloads running at once from one host (`--max-downloads-per-host`).
        public var maximumDownloadsPerHost: Int = 8
        /// Downloads that may wait beyond those (`--download-queue`); more are refused with 429.
        public var downloadQueueLimit: Int = 256
        /// Bytes a second a source body must average once its first 2 s have passed
        /// (`--min-download-rate`, 16 KiB): a trickle ends there (504) rather than at the download
        /// timeout, giving back its slot and its memory. 0 turns the check off.
        public var minimumDownloadRate = 16 << 10
        /// JPEG and WebP sources decode at the smallest scale that covers the output
        /// (`--fast-shrink-on-load`, `DecodingOptions.fastShrinkOnLoad`): faster, slightly
        /// softer. Part of every result key and ETag. Off by default.
        public var fastShrinkOnLoad = false
        /// The JPEG encoder (`--jpeg-encoder`): the perceptual one by default; `.libjpegTurbo`
        /// reproduces the bytes of earlier releases. Part of every result key and ETag.
        public var jpegEncoder: JPEGEncodingOptions.Encoder = .perceptual
        /// Most frames of an animated source (GIF, WebP) answered as WebP
        /// (`--max-animation-frames`, imgproxy's `IMGPROXY_MAX_ANIMATION_FRAMES`): 1, the
        /// default, answers the first frame as a still image; N > 1 an animated WebP of at most
        /// the first N frames. The frames kept count against `maxSourcePixels` (width × height ×
        /// frames, as imgproxy counts them). JPEG, PNG and AVIF answers are always the first
        /// frame; a byte cap (`mb:`) makes a still one. Part of every result key and ETag when
        /// above 1.
        public var maxAnimationFrames = 1
        /// WebP quality when the URL does not say: imgproxy's default, 79.
        public var defaultWebPQuality = 79
        /// A URL without a format gets WebP when the request's `Accept` names `image/webp`
        /// (`--auto-webp`); every such answer carries `Vary: Accept`. Off by default.
        public var autoWebP = false
        /// AVIF quality when the URL does not say: imgproxy's default, 63.
        public var defaultAVIFQuality = 63
        /// As `autoWebP` for `image/avif` (`--auto-avif`); with both on, AVIF is preferred.
        public var autoAVIF = false
        /// Seconds a request may take from arrival to answer, queue, download and render included
        /// (`--request-timeout`, 10 as imgproxy's `IMGPROXY_TIMEOUT`): 504 beyond, and its work is
        /// cancelled.
        public var requestTimeout: TimeInterval = 10

        /// A configuration with `keys` (empty and `requiresSignature` false for `--unsafe`).
        public init(
            keys: [SigningKey], requiresSignature: Bool = true, sourcePolicy: SourcePolicy = SourcePolicy(),
            workers: Int = ProcessInfo.processInfo.activeProcessorCount, queueLimit: Int? = nil, memoryBudget: Int = 512 << 20,
            maxSourceBytes: Int = 64 << 20, maxSourcePixels: Int = 100_000_000, downloadTimeout: TimeInterval = 10,
            maxOutputSide: Int = 8192, maxPathLength: Int = 8192, timeToLive: Int = 31_536_000, defaultQuality: Int = 80,
            cacheDirectory: URL? = nil, cacheSize: Int = 1 << 30, resultMemoryLimit: Int = defaultMemoryCache / 2,
            sourceMemoryLimit: Int = defaultMemoryCache / 2, maximumConcurrentDownloads: Int = 64
        ) {
            self.keys = keys
            self.requiresSignature = requiresSignature
            self.sourcePolicy = sourcePolicy
            self.workers = max(1, workers)
            self.queueLimit = queueLimit ?? 32 * max(1, workers)
            self.memoryBudget = memoryBudget
            self.maxSourceBytes = maxSourceBytes
            self.maxSourcePixels = maxSourcePixels
            self.downloadTimeout = downloadTimeout
            self.maxOutputSide = maxOutputSide
            self.maxPathLength = maxPathLength
            self.timeToLive = timeToLive
            self.defaultQuality = defaultQuality
            self.cacheDirectory = cacheDirectory
            self.cacheSize = cacheSize
            self.resultMemoryLimit = resultMemoryLimit
            self.sourceMemoryLimit = sourceMemoryLimit
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
        }
    }
}
