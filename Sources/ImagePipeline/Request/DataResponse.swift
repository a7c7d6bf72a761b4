import Foundation
import ImageCodec

/// An image's original bytes, as `ImagePipeline.data(for:)` loads them (through the same
/// memory, disk and network layers, coalesced with every other request for the URL), for
/// callers that decode themselves: a thumbnail service admitting its own CPU work, say.
public struct DataResponse: Sendable, Equatable {
    /// The bytes with their header read once (a JPEG, PNG, WebP, HEIC or AVIF within the pipeline's decoding
    /// limits): plan and decode from it instead of reading the header again.
    public var image: ImageSource
    /// The bytes as the server sent them.
    public var data: Data { image.data }
    /// Where they came from: memory, disk, network or a revalidation.
    public var source: ImageResponse.Source
    /// Body bytes received from the network for this response (0 from a cache or after a 304).
    public var bytesDownloaded: Int
    /// The response's validators and type, as stored: the source's `ETag`, `Last-Modified`
    /// and `Content-Type`, for a caller that derives its own.
    public var etag: String?
    /// See `etag`.
    public var lastModified: String?
    /// See `etag`.
    public var contentType: String?

    /// A response, for example for a test double.
    public init(
        image: ImageSource, source: ImageResponse.Source, bytesDownloaded: Int = 0, etag: String? = nil, lastModified: String? = nil,
        contentType: String? = nil
    ) {
        self.image = image
        self.source = source
        self.bytesDownloaded = bytesDownloaded
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
    }
}
