import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec

/// The job that produces an image's original bytes: memory (`.encodedResponse`), disk, then
/// the network, with HTTP revalidation.
extension ImagePipeline {
    /// The one way a data job is made: its key (requests with the same key share the
    /// download) and its operation. `staleInMemory` is a stale decoded image's information,
    /// revalidated when there is no disk entry; it is not part of the key (D-F: two sizes of one
    /// URL, one stale in memory and one not, share the download).
    func dataJob(for request: ImageRequest, staleInMemory: HTTPCacheInfo?) -> JobSpec<OriginalData> {
        let key = DataJobKey(dataKey: request.dataKey, policy: request.cachePolicy, variant: request.variant)
        return JobSpec(key: .data(key)) { [self] job throws(ImagePipelineError) in
            try await loadOriginal(request, staleInMemory: staleInMemory, job: job)
        }
    }

    /// The original bytes for `request`, shared with every image job that needs them; the
    /// download follows `job`'s priority, in the same step as every change to it.
    func original(for request: ImageRequest, staleInMemory: HTTPCacheInfo?, job: JobContext) async -> Result<OriginalData, ImagePipelineError> {
        await coordinator.result(
            of: dataJob(for: request, staleInMemory: staleInMemory), priority: request.priority, dependent: job.id,
            progress: { job.reportProgress(received: $0, expected: $1) }, onJoin: { [recorder] in recorder.add(.sharedDownloads) })
    }

    /// What the caches hold for a key: bytes (nil when only a stale image in memory is known),
    /// their HTTP information, and which cache.
    private struct Cached {
        let data: Data?
        let info: HTTPCacheInfo
        let source: ImageResponse.Source
        let use: CacheUse
    }

    private func loadOriginal(
        _ request: ImageRequest, staleInMemory: HTTPCacheInfo?, job: JobContext
    ) async throws(ImagePipelineError) -> OriginalData {
        let cached = try await cachedOriginal(for: request, staleInMemory: staleInMemory)
        if let cached, let data = cached.data, cached.use == .serve {
            recorder.add(cached.source == .disk ? .diskHits : .memoryHits)
            if cached.source == .disk { dataMemory?.setValue(CachedData(data: data, info: cached.info), forKey: request.dataKey, cost: data.count) }
            return OriginalData(data: data, info: cached.info, source: cached.source, bytesDownloaded: 0, confirmed: nil)
        }
        guard request.cachePolicy != .returnCacheDataDontLoad else { throw .notCached }
        return try await download(request, cached: cached, job: job)
    }

    /// The cached original the request may use: memory (`.encodedResponse`), else disk, else
    /// what is known of a stale image in memory. A disk read is charged to
    /// `Configuration.cachedDataMemory` (whether the bytes are then served or revalidated):
    /// `.network(.overloaded)` when it has no room.
    private func cachedOriginal(for request: ImageRequest, staleInMemory: HTTPCacheInfo?) async throws(ImagePipelineError) -> Cached? {
        if let (entry, use) = memoryEntry(for: request), case .data(let hit) = entry {
            return Cached(data: hit.data, info: hit.info, source: .memory, use: use)
        }
        if request.usesCache, request.cachePolicy != .reloadIgnoringCache, let diskQueue {
            let found: DiskCacheEntry?
            do throws(DiskCacheError) {
                found = try await diskQueue.entry(forKey: request.dataKey, memory: readMemory)
            } catch {
                throw .network(.overloaded("no memory left to read the cached source now"))
            }
            if let entry = found {
                let info = HTTPCacheInfo(entry.metadata)
                let use = request.use(of: info, at: configuration.clock.now)
                if use != .none { return Cached(data: entry.data, info: info, source: .disk, use: use) }
            }
        }
        return staleInMemory.map { Cached(data: nil, info: $0, source: .memory, use: .revalidate) }
    }

    private func download(_ request: ImageRequest, cached: Cached?, job: JobContext) async throws(ImagePipelineError) -> OriginalData {
        var urlRequest = request.urlRequest
        let validators = cached.flatMap { Validators($0.info) }
        if let etag = validators?.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = validators?.lastModified { urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }
        let (requested, response) = try await load(urlRequest, conditional: validators != nil, job: job)
        let received = configuration.clock.now
        let rules = freshnessRules(for: request)
        if response.statusCode == 304 {
            // A 304 is an answer to a conditional request only.
            guard let cached, let validators else { throw .badStatus(304) }
            recorder.add(.notModifiedResponses)
            guard HTTPFreshness.selects(cached.info, notModified: response) else {
                // A 304 about another representation (its strong ETag is not ours): nothing
                // stored may be updated or served from it (RFC 9111 §4.3.4). Ask again, plainly.
                return try await download(request, cached: nil, job: job)
            }
            switch HTTPFreshness.revalidated(
                cached.info, by: response, to: request.urlRequest, requested: requested, received: received, rules: rules)
            {
            case .none:
                invalidate(request.dataKey)
                return OriginalData(data: cached.data, info: nil, source: .revalidated, bytesDownloaded: 0, confirmed: validators)
            case .store(let info):
                if let data = cached.data { refreshOriginal(data, info: info, confirmed: validators, forKey: request.dataKey) }
                return OriginalData(
                    data: cached.data, info: info, source: .revalidated, bytesDownloaded: response.data.count, confirmed: validators)
            }
        }
        // 200 and 203 are whole representations; 206 (a range) and the other 2xx are not an image.
        guard [200, 203].contains(response.statusCode) else { throw .badStatus(response.statusCode) }
        let data = response.data
        let image = try readHeader(data)
        recorder.add(.downloads)
        recorder.add(.bytesDownloaded, data.count)
        let storage =
            request.usesCache
            ? HTTPFreshness.storage(for: response, to: request.urlRequest, requested: requested, received: received, rules: rules) : .none
        switch storage {
        case .none:
            // Not storable: keep nothing, and drop what an earlier response left, and what was
            // made from it.
            invalidate(request.dataKey)
            return OriginalData(data: data, info: nil, source: .network, bytesDownloaded: data.count, confirmed: nil, image: image)
        case .store(let info):
            // Kept from here on, even if every request that wanted it is cancelled before its
            // decode: the bytes are whole and their header is sound.
            storeOriginal(data, info: info, forKey: request.dataKey)
            return OriginalData(data: data, info: info, source: .network, bytesDownloaded: data.count, confirmed: nil, image: image)
        }
    }

    /// Sends `urlRequest` in a download slot; returns when it was sent and the response.
    private func load(_ urlRequest: URLRequest, conditional: Bool, job: JobContext) async throws(ImagePipelineError) -> (Date, DataLoadingResponse) {
        let (loader, limit, clock, recorder) = (configuration.dataLoader, configuration.maximumResponseSize, configuration.clock, recorder)
        return try await coordinator.run(.download, for: job) { () async throws(ImagePipelineError) -> (Date, DataLoadingResponse) in
            try Task.checkCancellation(or: ImagePipelineError.cancelled)
            let requested = clock.now
            recorder.add(.networkRequests)
            if conditional { recorder.add(.conditionalRequests) }
            do throws(DataLoadingError) {
                let priority = job.downloadPriority()
                let response = try await loader.loadData(for: urlRequest, maximumBodySize: limit, priority: priority) { received, expected in
                    job.reportProgress(received: received, expected: expected)
                }
                return (requested, response)
            } catch .cancelled {
                recorder.add(.cancelledDownloads)
                throw .cancelled
            } catch .bodyTooLarge(let limit) {
                throw .tooLarge(limit: limit)
            } catch {
                throw .network(error)
            }
        }
    }

    /// How this pipeline judges storing and freshness: as a private cache, or as a shared one
    /// (`Configuration.isSharedCache`) for this request.
    private func freshnessRules(for request: ImageRequest) -> HTTPFreshness.Rules {
        HTTPFreshness.Rules(
            heuristicLifetime: configuration.heuristicFreshnessLifetime, isShared: configuration.isSharedCache,
            requestHasAuthorization: request.urlRequest.value(forHTTPHeaderField: "Authorization") != nil)
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

    /// A 304 confirmed the original with `confirmed` validators, read before the request: it
    /// takes the new freshness in memory and on disk, but only where the entry is still the one
    /// confirmed. A newer response stored meanwhile is not overwritten, and an entry removed
    /// meanwhile (invalidated) is not brought back (D-G).
    func refreshOriginal(_ data: Data, info: HTTPCacheInfo, confirmed: Validators, forKey key: String) {
        dataMemory?.replaceValue(CachedData(data: data, info: info), forKey: key, cost: data.count) { Validators($0.info) == confirmed }
        refreshStored(forKey: key, holding: data.count, confirmed: confirmed, otherwise: .keep) { _ in (data, info.metadata) }
    }

    /// What a refresh does with a stored entry that is not the one a 304 confirmed.
    enum UnconfirmedEntry {
        /// A newer response's: it stays.
        case keep
        /// Made from another response than the one in memory (a thumbnail): it goes.
        case remove
    }

    /// Queues the disk half of a compare-and-set after a 304: on the writer's queue, the entry
    /// for `key` is read again and replaced by what `refreshed` makes of it only if its
    /// validators are still `confirmed`; otherwise `otherwise` says what becomes of it. A
    /// missing entry stays missing. `holding` is what `refreshed` keeps alive until then.
    func refreshStored(
        forKey key: String, holding bytes: Int, confirmed: Validators, otherwise: UnconfirmedEntry,
        _ refreshed: @escaping @Sendable (DiskCacheEntry) -> (Data, DiskCacheMetadata)
    ) {
        guard let diskQueue else { return }
        let (disk, recorder) = (diskQueue.disk, recorder)
        diskQueue.store(forKey: key, holding: bytes) {
            do throws(DiskCacheError) {
                guard let entry = try disk.entry(forKey: key, allowingExpired: true) else { return nil }
                guard Validators(HTTPCacheInfo(entry.metadata)) == confirmed else {
                    if otherwise == .remove { try disk.removeValue(forKey: key) }
                    return nil
                }
                return refreshed(entry)
            } catch {
                recorder.add(.diskErrors)
                return nil
            }
        }
    }

    /// Drops cached original bytes (bytes that turned out undecodable; an answer that may not be
    /// stored goes through `invalidate(_:)`, which drops what was made from them too).
    func removeOriginal(_ key: String) {
        dataMemory?.removeValue(forKey: key)
        diskQueue?.remove(forKey: key)
    }
}
