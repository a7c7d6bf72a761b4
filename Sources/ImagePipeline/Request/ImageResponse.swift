import ImageCodec

/// A loaded image and where it came from.
public struct ImageResponse: Sendable, Equatable {
    /// Where the image came from.
    public enum Source: String, Sendable, Hashable, Codable, CaseIterable {
        /// The memory cache (no I/O, no decode for decoded strategies).
        case memory
        /// The disk cache, fresh (no request sent).
        case disk
        /// Downloaded in full.
        case network
        /// Cached but stale: the server confirmed it with 304 Not Modified, the body was not sent again.
        case revalidated
    }

    /// The decoded image, upright.
    public var bitmap: Bitmap
    /// Where the image came from: memory, disk, network or a revalidation.
    public var source: Source
    /// Body bytes received from the network for this image (0 from a cache or after a 304).
    public var bytesDownloaded: Int

    /// A response, for example for a test double.
    public init(bitmap: Bitmap, source: Source, bytesDownloaded: Int = 0) {
        self.bitmap = bitmap
        self.source = source
        self.bytesDownloaded = bytesDownloaded
    }
}
