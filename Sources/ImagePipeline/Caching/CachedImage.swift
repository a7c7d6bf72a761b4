import ImageCodec

/// A decoded image in the memory cache, with what is needed to judge and revalidate it. A class:
/// a hit then copies one reference out of the cache, not the bitmap's arrays and the headers.
final class CachedImage: Sendable {
    let bitmap: Bitmap
    let info: HTTPCacheInfo

    init(bitmap: Bitmap, info: HTTPCacheInfo) {
        self.bitmap = bitmap
        self.info = info
    }
}
