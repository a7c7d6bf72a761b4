import Foundation
import ImageCodec
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What to load and how: a URL (or a whole `URLRequest`, for headers), the size to decode at,
/// a priority, a cache policy, and optionally the key to cache it under.
///
/// ```swift
/// // An aspect-fill grid cell: exactly 400×400, cropped while decoding.
/// let request = ImageRequest(url: product.thumbnailURL, resize: .fill(width: 400, height: 400))
/// let response = try await pipeline.image(for: request)
/// ```
public struct ImageRequest: Sendable, Hashable {
    /// The HTTP request; its URL identifies the image.
    public var urlRequest: URLRequest {
        didSet { dataKey = Self.dataKey(urlRequest, cacheKey) }
    }
    /// What size to decode at (fit, fill with a gravity, fill-down, force; see `Resize`); nil
    /// decodes at full size. Part of every cache key: requests for one URL at different sizes
    /// share the download and the disk read, not the decode.
    public var resize: Resize?
    /// Longest side of the decoded image in pixels, never upscaled: the shorthand for
    /// `resize = .maxPixelSize(n)`. Reads nil when `resize` is anything else.
    public var maxPixelSize: Int? {
        get { resize?.maxPixelSize }
        set { resize = newValue.map(Resize.maxPixelSize) }
    }
    /// How urgently the image is needed; `.normal` by default.
    public var priority: Priority
    /// Whether caches may answer; `.useCache` by default.
    public var cachePolicy: CachePolicy
    /// The key the image is cached under; by default the URL, so two URLs for one image (a
    /// signed URL with a changing query, say) can share an entry.
    public var cacheKey: String? {
        didSet { dataKey = Self.dataKey(urlRequest, cacheKey) }
    }
    /// The key the original bytes are cached under: `cacheKey`, else the URL. Kept rather than
    /// computed, because a memory hit looks it up and `URL.absoluteString` allocates.
    private(set) var dataKey: String

    /// A request for `url`, decoded with the longest side at most `maxPixelSize`.
    public init(
        url: URL, maxPixelSize: Int? = nil, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache,
        cacheKey: String? = nil
    ) {
        self.init(
            urlRequest: URLRequest(url: url), resize: maxPixelSize.map(Resize.maxPixelSize), priority: priority,
            cachePolicy: cachePolicy, cacheKey: cacheKey)
    }

    /// A request for `url`, decoded to the size `resize` makes.
    public init(
        url: URL, resize: Resize?, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache,
        cacheKey: String? = nil
    ) {
        self.init(urlRequest: URLRequest(url: url), resize: resize, priority: priority, cachePolicy: cachePolicy, cacheKey: cacheKey)
    }

    /// A request sent as `urlRequest` (with its headers), decoded with the longest side at most `maxPixelSize`.
    public init(
        urlRequest: URLRequest, maxPixelSize: Int? = nil, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache,
        cacheKey: String? = nil
    ) {
        self.init(
            urlRequest: urlRequest, resize: maxPixelSize.map(Resize.maxPixelSize), priority: priority, cachePolicy: cachePolicy,
            cacheKey: cacheKey)
    }

    /// A request sent as `urlRequest` (with its headers), decoded to the size `resize` makes.
    public init(
        urlRequest: URLRequest, resize: Resize?, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache,
        cacheKey: String? = nil
    ) {
        self.urlRequest = urlRequest
        self.resize = resize
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.cacheKey = cacheKey
        dataKey = Self.dataKey(urlRequest, cacheKey)
    }

    /// The URL being loaded.
    public var url: URL? { urlRequest.url }

    private static func dataKey(_ request: URLRequest, _ cacheKey: String?) -> String {
        cacheKey ?? request.url?.absoluteString ?? ""
    }
}
