import Foundation
import ImageCodec

/// The job that produces a decoded image: a thumbnail from disk, or the original bytes decoded
/// at the request's size, reusing a stale image in memory when the server confirms it.
extension ImagePipeline {
    func imageJobKey(for request: ImageRequest) -> ImageJobKey {
        ImageJobKey(dataKey: request.dataKey, resize: decodeSize(for: request), policy: request.cachePolicy)
    }

    func loadImage(_ request: ImageRequest, job: SharedJob<ImageResponse>) async throws(ImagePipelineError) -> ImageResponse {
        // An identical job that finished a moment ago may have filled the memory cache.
        if let response = memoryResponse(for: request, decodingEncoded: false) { return response }
        let size = decodeSize(for: request)
        let memoryKey = memoryKey(for: request)
        let stale =
            request.cachePolicy.readsCache ? imageMemory?.value(forKey: memoryKey).flatMap { $0.info.matches(request.urlRequest) ? $0 : nil } : nil
        if let response = try await storedThumbnail(for: request, job: job) { return response }

        let original = try await original(for: request, memoryValidators: stale.flatMap { Validators($0.info) }, parent: job).get()
        if original.source == .revalidated, let stale, let confirmed = original.confirmed, Validators(stale.info) == confirmed {
            // 304 for the image in memory: keep it, fresh again, without decoding anything.
            if let info = original.info {
                imageMemory?.setValue(CachedImage(bitmap: stale.bitmap, info: info), forKey: memoryKey, cost: stale.bitmap.byteCount)
            } else {
                imageMemory?.removeValue(forKey: memoryKey)
            }
            return ImageResponse(bitmap: stale.bitmap, source: .revalidated, bytesDownloaded: original.bytesDownloaded)
        }
        guard let data = original.data else {
            // Confirmed, but the image it confirmed left memory meanwhile: download it again.
            var reload = request
            reload.cachePolicy = .reloadIgnoringCache
            return try await loadImage(reload, job: job)
        }
        let decoded = try await decodes.runOnThread(for: job) { [self, image = original.image] in
            Result { () throws(ImagePipelineError) in try decode(data, resize: size, image: image) }
        }
        let bitmap: Bitmap
        switch decoded {
        case .success(let decodedBitmap):
            bitmap = decodedBitmap
        case .failure(let error):
            // Stored bytes that do not decode are of no use to anyone: drop them.
            if original.info != nil { removeOriginal(request.dataKey) }
            throw error
        }
        if let info = original.info {
            imageMemory?.setValue(CachedImage(bitmap: bitmap, info: info), forKey: memoryKey, cost: bitmap.byteCount)
            storeThumbnail(bitmap, info: info, for: request)
        }
        return ImageResponse(bitmap: bitmap, source: original.source, bytesDownloaded: original.bytesDownloaded)
    }
}
