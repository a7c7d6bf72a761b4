import Foundation

/// HTTP facts kept beside the bytes, for revalidation by the loading layer.
public struct DiskCacheMetadata: Sendable, Hashable, Codable {
    /// The response's `Content-Type`.
    public var contentType: String?
    /// The response's `ETag`, sent back as `If-None-Match` when revalidating.
    public var etag: String?
    /// The response's `Last-Modified`, sent back as `If-Modified-Since` when revalidating.
    public var lastModified: String?
    /// After this moment the entry is stale: a plain read treats it as a miss.
    public var expires: Date?
    /// Further named values kept with the entry; the cache does not interpret them (the
    /// pipeline keeps the response headers it needs to merge a 304 and honour `Vary`).
    public var fields: [String: String]

    /// Metadata with the given fields (all absent by default).
    public init(
        contentType: String? = nil, etag: String? = nil, lastModified: String? = nil, expires: Date? = nil,
        fields: [String: String] = [:]
    ) {
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
        self.fields = fields
    }
}

/// One verified entry read back from disk.
public struct DiskCacheEntry: Sendable, Hashable {
    /// The key it was stored under.
    public var key: String
    /// The bytes stored.
    public var data: Data
    /// The metadata stored with them.
    public var metadata: DiskCacheMetadata

    /// An entry with the given contents, for example for a test double.
    public init(key: String, data: Data, metadata: DiskCacheMetadata) {
        self.key = key
        self.data = data
        self.metadata = metadata
    }
}
