import Foundation
import ImageCodec

/// The original bytes of an image, what the caches know of them, and where they came from.
struct OriginalData: Sendable {
    /// nil only after a 304 for an image that is only in memory (nothing else was cached).
    let data: Data?
    /// nil when the response may not be stored (`no-store`, `Vary: *`).
    let info: HTTPCacheInfo?
    let source: ImageResponse.Source
    let bytesDownloaded: Int
    /// For `.revalidated`: the validators the server confirmed.
    let confirmed: Validators?
    /// The header read that checked a download, kept for its decode; nil for cached bytes.
    var image: ImageSource? = nil
}
