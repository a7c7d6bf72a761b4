import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec

/// The job that produces an image's original bytes: memory (`.encodedResponse`), disk, then
/// the network, with HTTP revalidation.
extension ImagePipeline {
    /// The original bytes for `request`, shared with every image job that needs them.
    func original(for request: ImageRequest, memoryValidators: Validators?, parent: SharedJob<ImageResponse>)
        async -> Result<OriginalData, ImagePipelineError> {
        let key = DataJobKey(dataKey: request.dataKey, policy: request.cachePolicy, memoryValidators: memoryValidators)
        return await dataJobs.result(
            for: key, priority: parent.priority, following: parent.observePriority,
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
        if policy != .reloadIgnoringCache {
            if let hit = dataMemory?.value(forKey: key.dataKey) {
                cached = Cached(data: hit.data, info: hit.info, source: .memory)
            } else if let entry = readDisk(key.dataKey) {
                cached = Cached(data: entry.data, info: HTTPCacheInfo(entry.metadata), source: .disk)
            } else if let validators = key.memoryValidators {
                cached = Cached(data: nil, info: HTTPCacheInfo(etag: validators.etag, lastModified: validators.lastModified,
                                                               expires: .distantPast), source: .memory)
            }
        }
        if let cached, let data = cached.data,
           policy == .returnCacheDataDontLoad || (policy == .useCache && cached.info.isFresh(at: configuration.clock.now)) {
            recorder.add(cached.source == .disk ? .diskHits : .memoryHits)
            if cached.source == .disk { dataMemory?.setValue(CachedData(data: data, info: cached.info), forKey: key.dataKey, cost: data.count) }
            return OriginalData(data: data, info: cached.info, source: cached.source, bytesDownloaded: 0, confirmed: nil, commit: nil)
        }
        guard policy != .returnCacheDataDontLoad else { throw .notCached }
        return try await download(request, key: key, cached: cached, job: job)
    }

    private func download(_ request: ImageRequest, key: DataJobKey, cached: Cached?, job: SharedJob<OriginalData>)
        async throws(ImagePipelineError) -> OriginalData {
        var urlRequest = request.urlRequest
        let validators = cached.flatMap { Validators($0.info) }
        if let etag = validators?.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = validators?.lastModified { urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        let (loader, limit, clock) = (configuration.dataLoader, configuration.maximumResponseSize, configuration.clock)
        let (requested, response) = try await downloads.run(priority: { job.priority }) {
            [recorder] () async throws(ImagePipelineError) -> (Date, DataLoadingResponse) in
            try Task.checkCancellation(or: ImagePipelineError.cancelled)
            let requested = clock.now
            recorder.add(.networkRequests)
            if validators != nil { recorder.add(.conditionalRequests) }
            do throws(DataLoadingError) {
                return (requested, try await loader.loadData(for: urlRequest, maximumBodySize: limit) { received, expected in
                    job.reportProgress(received: received, expected: expected)
                })
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
        let storage = HTTPFreshness.storage(for: response, requested: requested, received: received,
                                            heuristicLifetime: configuration.heuristicFreshnessLifetime, previous: cached?.info)
        if response.statusCode == 304 {
            // A 304 is an answer to a conditional request only.
            guard let cached, let validators else { throw .badStatus(304) }
            recorder.add(.notModifiedResponses)
            guard case .store(let info) = storage else {
                removeOriginal(key.dataKey)
                return OriginalData(data: cached.data, info: nil, source: .revalidated, bytesDownloaded: 0, confirmed: validators, commit: nil)
            }
            if let data = cached.data { storeOriginal(data, info: info, forKey: key.dataKey) }
            return OriginalData(data: cached.data, info: info, source: .revalidated, bytesDownloaded: response.data.count,
                                confirmed: validators, commit: nil)
        }
        guard (200..<300).contains(response.statusCode) else { throw .badStatus(response.statusCode) }
        do throws(ImageCodecError) {
            _ = try ImageFormat.sniff(response.data)
        } catch {
            if case .unsupportedFormat(let format) = error { throw .notAnImage(format) }
            throw .notAnImage(.unknown)
        }
        recorder.add(.downloads)
        recorder.add(.bytesDownloaded, response.data.count)
        let data = response.data
        switch storage {
        case .none:
            // no-store: keep nothing, and drop what an earlier response left.
            removeOriginal(key.dataKey)
            return OriginalData(data: data, info: nil, source: .network, bytesDownloaded: data.count, confirmed: nil, commit: nil)
        case .store(let info):
            return OriginalData(data: data, info: info, source: .network, bytesDownloaded: data.count, confirmed: nil,
                                commit: CommitOnce { [self] in storeOriginal(data, info: info, forKey: key.dataKey) })
        }
    }

    /// The disk entry for `key`, stale or not; a disk that cannot be read is a miss.
    func readDisk(_ key: String) -> DiskCacheEntry? {
        guard let disk = configuration.diskCache else { return nil }
        do {
            return try disk.entry(forKey: key, allowingExpired: true)
        } catch {
            recorder.add(.diskErrors)
            return nil
        }
    }

    func storeOriginal(_ data: Data, info: HTTPCacheInfo, forKey key: String) {
        dataMemory?.setValue(CachedData(data: data, info: info), forKey: key, cost: data.count)
        guard let disk = configuration.diskCache else { return }
        do {
            try disk.setValue(data, forKey: key, metadata: info.metadata)
        } catch {
            recorder.add(.diskErrors)
        }
    }

    /// Drops cached original bytes (a no-store answer, or bytes that turned out undecodable).
    func removeOriginal(_ key: String) {
        dataMemory?.removeValue(forKey: key)
        do {
            try configuration.diskCache?.removeValue(forKey: key)
        } catch {
            recorder.add(.diskErrors)
        }
    }
}
