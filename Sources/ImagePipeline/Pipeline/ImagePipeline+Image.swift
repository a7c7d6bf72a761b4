import Foundation
import ImageCache
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
        let stale = request.cachePolicy == .reloadIgnoringCache ? nil : imageMemory?.value(forKey: memoryKey)
        if let response = await storedThumbnail(for: request, job: job) { return response }

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
        let bitmap: Bitmap
        do {
            bitmap = try await decodes.runOnThread(priority: { job.priority }) { [self] in
                Result { () throws(ImagePipelineError) in try decode(data, resize: size) }
            }.get()
        } catch .cancelled {
            throw .cancelled
        } catch {
            // Cached bytes that do not decode are of no use to anyone: drop them.
            if original.source == .memory || original.source == .disk { removeOriginal(request.dataKey) }
            throw error
        }
        original.commit?.run()
        if let info = original.info {
            imageMemory?.setValue(CachedImage(bitmap: bitmap, info: info), forKey: memoryKey, cost: bitmap.byteCount)
            storeThumbnail(bitmap, info: info, for: request)
        }
        return ImageResponse(bitmap: bitmap, source: original.source, bytesDownloaded: original.bytesDownloaded)
    }

    // MARK: - Thumbnails on disk

    /// The disk key of the thumbnail of `request` (`storesThumbnails`).
    func thumbnailKey(for request: ImageRequest) -> String? {
        guard configuration.storesThumbnails, configuration.strategy == .downsampled, configuration.diskCache != nil,
              let size = request.resize else { return nil }
        // Kept-profile thumbnails hold other values than sRGB ones: they must not be shared.
        return request.dataKey + "#thumbnail@\(size)" + (configuration.colorManagement == .preserveSource ? "+profile" : "")
    }

    /// The thumbnail stored on disk, decoded, if the policy allows it and it decodes.
    private func storedThumbnail(for request: ImageRequest, job: SharedJob<ImageResponse>) async -> ImageResponse? {
        guard let key = thumbnailKey(for: request), let disk = configuration.diskCache,
              request.cachePolicy == .useCache || request.cachePolicy == .returnCacheDataDontLoad,
              let entry = readDisk(key) else { return nil }
        let info = HTTPCacheInfo(entry.metadata)
        guard request.cachePolicy == .returnCacheDataDontLoad || info.isFresh(at: configuration.clock.now) else { return nil }
        // The stored thumbnail is already the size asked for (and upright): decoded as it is.
        let decoded = try? await decodes.runOnThread(priority: { job.priority }) { [self] in
            Result { () throws(ImagePipelineError) in try decode(entry.data, resize: nil) }
        }
        guard let bitmap = try? decoded?.get() else {
            try? disk.removeValue(forKey: key)
            return nil
        }
        recorder.add(.thumbnailDiskHits)
        imageMemory?.setValue(CachedImage(bitmap: bitmap, info: info), forKey: memoryKey(for: request), cost: bitmap.byteCount)
        return ImageResponse(bitmap: bitmap, source: .disk)
    }

    /// Encodes the thumbnail (JPEG, PNG when it has alpha) and stores it beside the original.
    private func storeThumbnail(_ bitmap: Bitmap, info: HTTPCacheInfo, for request: ImageRequest) {
        guard let key = thumbnailKey(for: request), let disk = configuration.diskCache else { return }
        do {
            let data = bitmap.format.hasAlpha ? try ImageEncoder.png(bitmap) : try ImageEncoder.jpeg(bitmap, options: configuration.thumbnailEncoding)
            var metadata = info.metadata
            metadata.contentType = bitmap.format.hasAlpha ? "image/png" : "image/jpeg"
            try disk.setValue(data, forKey: key, metadata: metadata)
        } catch {
            recorder.add(.diskErrors)
        }
    }
}
