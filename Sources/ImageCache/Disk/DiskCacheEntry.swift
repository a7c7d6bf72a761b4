import Foundation

/// HTTP facts kept beside the bytes, for revalidation by the loading layer.
public struct DiskCacheMetadata: Sendable, Hashable, Codable {
    public var contentType: String?
    public var etag: String?
    public var lastModified: String?
    /// After this moment the entry is stale: a plain read treats it as a miss.
    public var expires: Date?

    public init(contentType: String? = nil, etag: String? = nil, lastModified: String? = nil, expires: Date? = nil) {
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
    }
}

/// One verified entry read back from disk.
public struct DiskCacheEntry: Sendable, Hashable {
    public var key: String
    public var data: Data
    public var metadata: DiskCacheMetadata
}
