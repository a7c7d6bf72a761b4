import Foundation
import ImageCodec

/// The job that produces a decoded image: a thumbnail from disk, or the original bytes decoded
/// at the request's size, reusing a stale image in memory when the server confirms it.
extension ImagePipeline {
    /// The one way an image job is made: its key (requests with the same key share it) and
    /// its operation.
    func imageJob(for request: ImageRequest) -> JobSpec<ImageResponse> {
        JobSpec(
            key: .image(
                ImageJobKey(dataKey: request.dataKey, resize: decodeSize(for: request), policy: request.cachePolicy, variant: request.variant))
        ) { [self] job throws(ImagePipelineError) in try await loadImage(request, job: job) }
    }

    func loadImage(_ request: ImageRequest, job: JobContext) async throws(ImagePipelineError) -> ImageResponse {
        try validate(request)
        // An identical job that finished a moment ago may have filled the memory cache.
        if let response = memoryResponse(for: request, decodingEncoded: false) { return response }
        // From here the job holds an original until its decode ends: it waits for its turn
        // before reading a byte (`maximumOriginalsHeld`), so fetches cannot outrun decodes.
        return try await coordinator.run(.original, for: job) { () async throws(ImagePipelineError) -> ImageResponse in
            try await fetchAndDecode(request, job: job)
        }
    }

    /// The image from a stored thumbnail, or from the original (revalidated, read from a cache
    /// or downloaded) decoded at the request's size.
    private func fetchAndDecode(_ request: ImageRequest, job: JobContext) async throws(ImagePipelineError) -> ImageResponse {
        let stale = staleImage(for: request)
        if let response = try await storedThumbnail(for: request, job: job) { return response }

        let original = try await original(for: request, staleInMemory: stale?.info, job: job).get()
        if original.source == .revalidated, let stale, let confirmed = original.confirmed, Validators(stale.info) == confirmed {
            // 304 for the image in memory: keep it, fresh again, without decoding anything.
            let memoryKey = memoryKey(for: request)
            if let info = original.info {
                // Only over the image the 304 confirmed: not over a newer one stored meanwhile.
                imageMemory?.replaceValue(CachedImage(bitmap: stale.bitmap, info: info), forKey: memoryKey, cost: stale.bitmap.byteCount) {
                    Validators($0.info) == confirmed
                }
                refreshThumbnail(for: request, info: info, confirmed: confirmed)
            } else {
                imageMemory?.removeValue(forKey: memoryKey)
            }
            return ImageResponse(bitmap: stale.bitmap, source: .revalidated, bytesDownloaded: original.bytesDownloaded)
        }
        guard let data = original.data else {
            // Confirmed, but the image it confirmed left memory meanwhile: download it again.
            var reload = request
            reload.cachePolicy = .reloadIgnoringCache
            return try await fetchAndDecode(reload, job: job)
        }
        let bitmap: Bitmap
        do {
            bitmap = try await decodeInSlot(data, image: original.image, resize: decodeSize(for: request), for: job)
        } catch {
            // Stored bytes that do not decode are of no use to anyone: drop them. Not for the
            // request's own errors, and not for a cancellation.
            if original.info != nil, error.condemnsBytes { removeOriginal(request.dataKey) }
            throw error
        }
        if let info = original.info, !madeBeforeInvalidation(info, for: request.dataKey) {
            imageMemory?.setValue(CachedImage(bitmap: bitmap, info: info), forKey: memoryKey(for: request), cost: bitmap.byteCount)
            storeThumbnail(bitmap, info: info, for: request)
        }
        return ImageResponse(bitmap: bitmap, source: original.source, bytesDownloaded: original.bytesDownloaded)
    }
}

/// A job's key and operation: what a caller subscribes with.
struct JobSpec<Value: Sendable>: Sendable {
    let key: JobKey
    let operation: @Sendable (JobContext) async throws(ImagePipelineError) -> Value
}
