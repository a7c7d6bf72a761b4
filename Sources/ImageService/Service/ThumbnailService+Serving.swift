import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCodec
import ImagePipeline
import ImageCache

extension ThumbnailService {
    /// A parsed request: from the result cache, else from the source, rendered once for every
    /// identical request in flight.
    func serve(_ job: ProcessingJob, _ request: ServiceRequest) async -> ServiceResponse {
        for format in job.candidateFormats {
            let hit: (RenderedImage, ResultCache.Layer)?
            switch await results.value(forKey: job.resultKey(format), ledger: ledger) {
            case .success(let found): hit = found
            case .failure(let error): return .error(error)
            }
            if let (image, layer) = hit, job.accepts(image, as: format) {
                counters.addResultHit()
                metrics.recordHit(layer: layer.rawValue)
                return respond(with: image, to: request, job: job, layer: layer.rawValue, timing: nil)
            }
        }

        // A request that cannot be answered 304 joins whatever is already fetching and rendering
        // the same result, before touching the source: a source that just changed (so
        // heuristically stale at once) would otherwise be revalidated by every request arriving
        // while the first one renders, and a hot new URL would cost the origin a request each.
        let outcome: Result<Outcome, ServiceError>
        if let ifNoneMatch = request.ifNoneMatch {
            outcome = await produce(job, ifNoneMatch: ifNoneMatch)
        } else {
            outcome = await flights.result(
                for: job.flightKey,
                onJoin: { [counters, metrics] in
                    counters.addCoalesced()
                    metrics.coalesced.increment()
                }
            ) { [self] in
                await produce(job, ifNoneMatch: nil)
            }
        }
        switch outcome {
        case .success(.rendered(let image, let layer)):
            return respond(with: image, to: request, job: job, layer: layer, timing: image.timing)
        case .success(.notModified(let etag, let lastModified, let layer)):
            counters.addNotModified()
            return notModified(etag: etag, lastModified: lastModified, job: job, layer: layer)
        case .failure(let error):
            return .error(error)
        }
    }

    /// What fetching the source and rendering produced for a request.
    enum Outcome: Sendable {
        /// The result, and where its source came from.
        case rendered(RenderedImage, layer: String)
        /// `If-None-Match` named the result's `ETag`: nothing was decoded.
        case notModified(etag: String, lastModified: String?, layer: String)
    }

    /// Source (through the pipeline: memory, disk, origin) → validator → 304, or one render
    /// shared by every identical request whose source has the same validator.
    private func produce(_ job: ProcessingJob, ifNoneMatch: String?) async -> Result<Outcome, ServiceError> {
        let downloadStarted = ContinuousClock.now
        let request = sourceRequest(job.source)
        // The source's bytes are charged to the memory budget for as long as they live: a
        // download's as they arrive (the loader's buffer), a disk read's from before it is read
        // (the pipeline reads into memory charged to the same budget).
        let source: DataResponse
        do {
            source = try await pipeline.data(for: request)
        } catch {
            if let reason = ServiceError.sourceFailureReason(error) { metrics.recordSourceFailure(reason: reason) }
            return .failure(ServiceError(error))
        }
        let layer: String
        var timing = PhaseTiming()
        switch source.source {
        case .memory: layer = "source-memory"
        case .disk: layer = "source-disk"
        case .network, .revalidated:
            layer = source.source == .network ? "origin" : "revalidated"
            timing.download = (ContinuousClock.now - downloadStarted).milliseconds
        }
        if source.source == .memory || source.source == .disk { metrics.recordHit(layer: layer) }

        // The pipeline read the header once, checking the download (or the cached bytes): the
        // render plans and decodes from that read.
        let header = source.image.header
        let format = job.options.format ?? (header.hasAlpha ? .png : .jpeg)
        let validator = EntityTag.sourceValidator(etag: source.etag, lastModified: source.lastModified, data: source.data)
        if job.skipsProcessing(header.format) {
            // The source's bytes as they are (they passed the header read), shared, not copied:
            // nothing to render, nothing to keep beside the source the pipeline caches, and the
            // bytes stay charged as the source while the answer is written.
            let etag = EntityTag.make(
                sourceValidator: validator, canonicalOptions: job.renderOptions, resize: "skip", format: header.format.rawValue)
            if let ifNoneMatch, EntityTag.matches(ifNoneMatch, etag) {
                return .success(.notModified(etag: etag, lastModified: source.lastModified, layer: layer))
            }
            let image = RenderedImage(
                body: source.data, contentType: header.format.mimeType, etag: etag, lastModified: source.lastModified,
                sourceHasAlpha: header.hasAlpha, timing: timing)
            return .success(.rendered(image, layer: layer))
        }
        // Without auto-rotation (`ar:0`) the decoder keeps the stored frame.
        let (sourceWidth, sourceHeight) = job.options.autoRotates ? (header.displayWidth, header.displayHeight) : (header.width, header.height)
        let resize = job.resize(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        let etag = EntityTag.make(
            sourceValidator: validator, canonicalOptions: job.renderOptions, resize: resize?.description ?? "none",
            format: job.formatKey(format))
        if let ifNoneMatch, EntityTag.matches(ifNoneMatch, etag) {
            return .success(.notModified(etag: etag, lastModified: source.lastModified, layer: layer))
        }

        let resultKey = job.resultKey(format)
        let render = RenderInput(
            image: source.image, options: job.options, resize: resize, format: format, quality: job.quality(for: format), etag: etag,
            lastModified: source.lastModified, download: timing.download, resultKey: resultKey, source: job.source)
        let result = await renders.result(
            for: resultKey + "|" + etag,
            onJoin: { [counters, metrics] in
                counters.addCoalesced()
                metrics.coalesced.increment()
            }
        ) { [self] in
            await self.render(render)
        }
        return result.map { .rendered($0, layer: layer) }
    }

    /// The source fetch as the pipeline sees it: the URL, and a `User-Agent` that names us.
    func sourceRequest(_ url: URL) -> ImageRequest {
        var urlRequest = URLRequest(url: url)
        urlRequest.setValue("image-engine", forHTTPHeaderField: "User-Agent")
        return ImageRequest(urlRequest: urlRequest, resize: nil)
    }

    private func respond(
        with image: RenderedImage, to request: ServiceRequest, job: ProcessingJob, layer: String, timing: PhaseTiming?
    ) -> ServiceResponse {
        if let ifNoneMatch = request.ifNoneMatch, EntityTag.matches(ifNoneMatch, image.etag) {
            counters.addNotModified()
            return notModified(etag: image.etag, lastModified: image.lastModified, job: job, layer: layer)
        }
        var headers =
            [("Content-Type", image.contentType), ("Content-Length", String(image.body.count))]
            + cachingHeaders(image.etag, image.lastModified, job: job)
        if let format = ProcessingOptions.OutputFormat.allCases.first(where: { $0.contentType == image.contentType }) {
            headers.append(("Content-Disposition", job.contentDisposition(format)))
        }
        headers.append(("Server-Timing", timing?.headerValue ?? "cache;desc=\"\(layer)\""))
        headers.append(("Image-Engine-Cache", layer))
        return ServiceResponse(status: 200, headers: headers, body: image.body, cacheLayer: layer)
    }

    private func notModified(etag: String, lastModified: String?, job: ProcessingJob, layer: String) -> ServiceResponse {
        ServiceResponse(
            status: 304, headers: cachingHeaders(etag, lastModified, job: job) + [("Image-Engine-Cache", layer)], body: Data(),
            cacheLayer: layer)
    }

    /// `Cache-Control` and `Expires` (the TTL, capped at the URL's expiry), `ETag`,
    /// `Last-Modified`.
    private func cachingHeaders(_ etag: String, _ lastModified: String?, job: ProcessingJob) -> [(name: String, value: String)] {
        CacheLifetime(timeToLive: configuration.timeToLive, urlExpiry: job.options.expires).headers + [("ETag", etag)]
            + (lastModified.map { [("Last-Modified", $0)] } ?? [])
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
