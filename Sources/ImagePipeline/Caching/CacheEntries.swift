import Foundation
import ImageCache
import ImageCodec
import Locking

/// A decoded image in the memory cache, with what is needed to judge and revalidate it. A class:
/// a hit then copies one reference out of the cache, not the bitmap's arrays and three strings.
final class CachedImage: Sendable {
    let bitmap: Bitmap
    let info: HTTPCacheInfo

    init(bitmap: Bitmap, info: HTTPCacheInfo) {
        self.bitmap = bitmap
        self.info = info
    }
}

/// Original bytes in the memory cache (`.encodedResponse`).
struct CachedData: Sendable {
    let data: Data
    let info: HTTPCacheInfo
}

/// Memory-cache key of a decoded image: the data key and the size it was decoded at (nil: full size).
struct ImageMemoryKey: Hashable, Sendable {
    let dataKey: String
    let resize: Resize?
}

/// Validators of a cached representation that a conditional request asks about.
struct Validators: Hashable, Sendable {
    let etag: String?
    let lastModified: String?

    init?(_ info: HTTPCacheInfo) {
        guard info.hasValidators else { return nil }
        etag = info.etag
        lastModified = info.lastModified
    }
}

/// Jobs that produce original bytes, by what they would do.
struct DataJobKey: Hashable, Sendable {
    let dataKey: String
    let policy: ImageRequest.CachePolicy
    /// Validators of a stale image in memory when there is no disk entry to revalidate.
    let memoryValidators: Validators?
}

/// Jobs that produce a decoded image.
struct ImageJobKey: Hashable, Sendable {
    let dataKey: String
    let resize: Resize?
    let policy: ImageRequest.CachePolicy
}

/// The original bytes of an image and where they came from.
struct OriginalData: Sendable {
    /// nil only after a 304 for an image that is only in memory (nothing else was cached).
    let data: Data?
    /// nil when the response may not be stored (`no-store`).
    let info: HTTPCacheInfo?
    let source: ImageResponse.Source
    let bytesDownloaded: Int
    /// For `.revalidated`: the validators the server confirmed.
    let confirmed: Validators?
    /// Stores fresh bytes in the caches; run once, after the first successful decode, so nothing
    /// undecodable is ever cached.
    let commit: CommitOnce?
}

/// An action that runs at most once, whoever asks first.
final class CommitOnce: @unchecked Sendable {
    // @unchecked: `action` is taken under `lock`.
    private let lock = Lock()
    private var action: (@Sendable () -> Void)?

    init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    func run() {
        let action = lock.withLock { () -> (@Sendable () -> Void)? in
            defer { self.action = nil }
            return self.action
        }
        action?()
    }
}
