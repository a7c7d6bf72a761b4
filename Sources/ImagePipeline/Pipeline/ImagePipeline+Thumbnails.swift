import ImageCache
import ImageCodec

/// Decoded thumbnails stored on disk beside the originals (`storesThumbnails`), so a cold start
/// decodes a small file instead of the original.
extension ImagePipeline {
    /// The disk key of the thumbnail of `request` (`storesThumbnails`).
    func thumbnailKey(for request: ImageRequest) -> String? {
        guard configuration.storesThumbnails, configuration.strategy == .downsampled, configuration.diskCache != nil,
            let size = request.resize
        else { return nil }
        // Kept-profile thumbnails hold other values than sRGB ones, and fast-shrunk ones other
        // pixels: neither may be shared with the default's.
        return request.dataKey + "#thumbnail@\(size)" + (configuration.colorManagement == .preserveSource ? "+profile" : "")
            + (configuration.fastShrinkOnLoad ? "+fast" : "")
    }

    /// The thumbnail stored on disk, decoded, if the request may be served it and it decodes.
    /// Throws only `.cancelled` (the request went while the decode waited for a slot):
    /// cancelled is not failed, and the stored thumbnail stays for the next request.
    func storedThumbnail(for request: ImageRequest, job: JobContext) async throws(ImagePipelineError) -> ImageResponse? {
        guard let key = thumbnailKey(for: request), let diskQueue, request.usesCache, let entry = await diskQueue.entry(forKey: key) else {
            return nil
        }
        let info = HTTPCacheInfo(entry.metadata)
        guard request.use(of: info, at: configuration.clock.now) == .serve else { return nil }
        if await isInvalidated(info, for: request.dataKey) {
            diskQueue.remove(forKey: key)
            return nil
        }
        // The stored thumbnail is already the size asked for (and upright): decoded as it is.
        let bitmap: Bitmap
        do {
            bitmap = try await decodeInSlot(entry.data, image: nil, resize: nil, for: job)
        } catch .cancelled {
            throw .cancelled
        } catch {
            if error.condemnsBytes { diskQueue.remove(forKey: key) }
            return nil
        }
        recorder.add(.thumbnailDiskHits)
        imageMemory?.setValue(CachedImage(bitmap: bitmap, info: info), forKey: memoryKey(for: request), cost: bitmap.byteCount)
        return ImageResponse(bitmap: bitmap, source: .disk)
    }

    /// Queues encoding the thumbnail (JPEG, PNG when it has alpha) and storing it beside the
    /// original, on the disk writer's thread, after the image has been delivered.
    func storeThumbnail(_ bitmap: Bitmap, info: HTTPCacheInfo, for request: ImageRequest) {
        guard let key = thumbnailKey(for: request), let diskQueue else { return }
        let (encoding, recorder) = (configuration.thumbnailEncoding, recorder)
        diskQueue.store(forKey: key, holding: bitmap.byteCount) {
            do {
                let data = bitmap.format.hasAlpha ? try ImageEncoder.png(bitmap) : try ImageEncoder.jpeg(bitmap, options: encoding)
                var metadata = info.metadata
                metadata.contentType = bitmap.format.hasAlpha ? "image/png" : "image/jpeg"
                return (data, metadata)
            } catch {
                recorder.add(.diskErrors)
                return nil
            }
        }
    }

    /// A 304 confirmed the image in memory (made from the response with `confirmed`
    /// validators): the stored thumbnail takes the new freshness too, or the next cold start
    /// would judge it by the old one. Only if it was made from that same response: a thumbnail
    /// of another (an older one, whose replacement's write was lost) is removed instead, never
    /// relabelled as fresh.
    func refreshThumbnail(for request: ImageRequest, info: HTTPCacheInfo, confirmed: Validators) {
        guard let key = thumbnailKey(for: request) else { return }
        refreshStored(forKey: key, holding: 0, confirmed: confirmed, otherwise: .remove) { entry in
            var metadata = info.metadata
            metadata.contentType = entry.metadata.contentType
            return (entry.data, metadata)
        }
    }
}
