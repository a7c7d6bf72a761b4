import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCodec

/// The job that produces an image's original bytes: memory (`.encodedResponse`), disk, then
/// the network, with HTTP revalidation.
extension ImagePipeline {
    /// The original bytes for `request`, shared with every image job that needs them; the
    /// download follows `parent`'s priority.
    func original<Parent: Sendable>(
        for request: ImageRequest, memoryValidators: Validators?, parent: SharedJob<Parent>
    ) async -> Result<OriginalData, ImagePipelineError> {
        let key = DataJobKey(dataKey: request.dataKey, policy: request.cachePolicy, memoryValidators: memoryValidators)
        return await dataJobs.result(
            for: key, following: parent.priorityLink(),
            operation: { [self] job throws(ImagePipelineError) in try await loadOriginal(request, key: key, job: job) },
            progress: { parent.reportProgress(received: $0, expected: $1) },
            onJoin: { [recorder] in recorder.add(.sharedDownloads) })
    }

    /// What the caches hold for a key: bytes (nil when only validators of an image in memory
    /// are known), their HTTP information, and which cache.
    private struct Cached {
        let data: Data?
        let info: HTTPCacheInfo
        let source: ImageResponse.Source
    }

    func loadOriginal(_ request: ImageRequest, key: DataJobKey, job: SharedJob<OriginalData>) async throws(ImagePipelineError) -> OriginalData {
        let policy = request.cachePolicy
        var cached: Cached?
        if policy.readsCache {
            if let hit = dataMemory?.value(forKey: key.dataKey), hit.info.matches(request.urlRequest) {
                cached = Cached(data: hit.data, info: hit.info, source: .memory)
            } else if let entry = await diskQueue?.entry(forKey: key.dataKey), HTTPCacheInfo(entry.metadata).matches(request.urlRequest) {
                cached = Cached(data: entry.data, info: HTTPCacheInfo(entry.metadata), source: .disk)
            } else if let validators = key.memoryValidators {
                cached = Cached(
                    data: nil,
                    info: HTTPCacheInfo(
                        etag: validators.etag, lastModified: validators.lastModified,
                        expires: .distantPast), source: .memory)
            }
        }
        if let cached, let data = cached.data, policy.serves(cached.info, at: configuration.clock.now) {
            recorder.add(cached.source == .disk ? .diskHits : .memoryHits)
            if cached.source == .disk { dataMemory?.setValue(CachedData(data: data, info: cached.info), forKey: key.dataKey, cost: data.count) }
            return OriginalData(data: data, info: cached.info, source: cached.source, bytesDownloaded: 0, confirmed: nil)
        }
        guard policy != .returnCacheDataDontLoad else { throw .notCached }
        return try await download(request, key: key, cached: cached, job: job)
    }

    private func download(
        _ request: ImageRequest, key: DataJobKey, cached: Cached?, job: SharedJob<OriginalData>
    ) async throws(ImagePipelineError) -> OriginalData {
        var urlRequest = request.urlRequest
        let validators = cached.flatMap { Validators($0.info) }
        if let etag = validators?.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = validators?.lastModified { urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        let (loader, limit, clock) = (configuration.dataLoader, configuration.maximumResponseSize, configuration.clock)
        let (requested, response) = try await downloads.run(for: job) {
            [recorder, urlRequest] () async throws(ImagePipelineError) -> (Date, DataLoadingResponse) in
            try Task.checkCancellation(or: ImagePipelineError.cancelled)
            let requested = clock.now
            recorder.add(.networkRequests)
            if validators != nil { recorder.add(.conditionalRequests) }
            do throws(DataLoadingError) {
                return (
                    requested,
                    try await loader.loadData(for: urlRequest, maximumBodySize: limit) { received, expected in
                        job.reportProgress(received: received, expected: expected)
                    }
                )
            } catch .cancelled {
                recorder.add(.cancelledDownloads)
                throw .cancelled
            } catch .bodyTooLarge(let limit) {
                throw .tooLarge(limit: limit)
            } catch {
                throw .network(error)
            }
        }
        let received = clock.now
        if response.statusCode == 304 {
            // A 304 is an answer to a conditional request only.
            guard let cached, let validators else { throw .badStatus(304) }
            recorder.add(.notModifiedResponses)
            switch HTTPFreshness.revalidated(
                cached.info, by: response, to: request.urlRequest, requested: requested, received: received,
                heuristicLifetime: configuration.heuristicFreshnessLifetime)
            {
            case .none:
                removeOriginal(key.dataKey)
                return OriginalData(data: cached.data, info: nil, source: .revalidated, bytesDownloaded: 0, confirmed: validators)
            case .store(let info):
                if let data = cached.data { storeOriginal(data, info: info, forKey: key.dataKey) }
                return OriginalData(
                    data: cached.data, info: info, source: .revalidated, bytesDownloaded: response.data.count,
                    confirmed: validators)
            }
        }
        // 200 and 203 are whole representations; 206 (a range) and the other 2xx are not an image.
        guard [200, 203].contains(response.statusCode) else { throw .badStatus(response.statusCode) }
        let data = response.data
        let image = try readHeader(data)
        recorder.add(.downloads)
        recorder.add(.bytesDownloaded, data.count)
        switch HTTPFreshness.storage(
            for: response, to: request.urlRequest, requested: requested, received: received,
            heuristicLifetime: configuration.heuristicFreshnessLifetime)
        {
        case .none:
            // Not storable: keep nothing, and drop what an earlier response left.
            removeOriginal(key.dataKey)
            return OriginalData(data: data, info: nil, source: .network, bytesDownloaded: data.count, confirmed: nil, image: image)
        case .store(let info):
            // Kept from here on, even if every request that wanted it is cancelled before its
            // decode: the bytes are whole and their header is sound.
            storeOriginal(data, info: info, forKey: key.dataKey)
            return OriginalData(data: data, info: info, source: .network, bytesDownloaded: data.count, confirmed: nil, image: image)
        }
    }

    /// The bytes' one header read: the format from the bytes (not the Content-Type), and a
    /// header within the decoding limits. A download's is kept for its decode (`OriginalData.image`);
    /// cached bytes are read here when they are about to be decoded.
    func readHeader(_ data: Data) throws(ImagePipelineError) -> ImageSource {
        let limits = configuration.decodingLimits
        do throws(ImageCodecError) {
            let image = try ImageSource(data: data, limits: limits)
            try limits.check(width: image.header.width, height: image.header.height)
            return image
        } catch .unsupportedFormat(let format) {
            throw .notAnImage(format)
        } catch {
            throw .decodingFailed(error)
        }
    }

    func storeOriginal(_ data: Data, info: HTTPCacheInfo, forKey key: String) {
        dataMemory?.setValue(CachedData(data: data, info: info), forKey: key, cost: data.count)
        diskQueue?.store(data, metadata: info.metadata, forKey: key)
    }

    /// Drops cached original bytes (a no-store answer, or bytes that turned out undecodable).
    func removeOriginal(_ key: String) {
        dataMemory?.removeValue(forKey: key)
        diskQueue?.remove(forKey: key)
    }
}
