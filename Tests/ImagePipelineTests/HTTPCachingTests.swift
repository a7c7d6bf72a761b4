import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache
import ImageCodec
@testable import ImagePipeline
import ImageServer
import Testing
import TestSupport

@Suite("Pipeline: HTTP caching")
struct HTTPCachingTests {
    @Test("a fresh disk entry is served without any request, to a new pipeline with an empty memory cache")
    func freshEntryNoRequest() async throws {
        let fixture = try await PipelineFixture.start()
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 200)
        let disk = try fixture.diskCache()
        let warm = fixture.pipeline(disk: disk)
        let first = try await warm.image(for: request).bitmap
        await warm.flushDiskWrites()
        let pipeline = fixture.pipeline(disk: disk)
        let response = try await pipeline.image(for: request)
        #expect(response.source == .disk && response.bitmap == first && response.bytesDownloaded == 0)
        #expect(fixture.server.statistics.requests == 1)
        #expect(try await pipeline.image(for: request).source == .memory)
        #expect(pipeline.statistics.diskHits == 1 && pipeline.statistics.memoryHits == 1)
        await pipeline.flushDiskWrites()
    }

    @Test("D-C: a 304 refreshes the stored thumbnail only if the 304 confirmed the response it was made from")
    func notModifiedRefreshesOnlyTheConfirmedThumbnail() async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=60", clock: clock)
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk, storesThumbnails: true, clock: clock)
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)
        _ = try await pipeline.image(for: request)
        await pipeline.flushDiskWrites()
        let key = try #require(pipeline.thumbnailKey(for: request))
        let oldThumbnail = try #require(try disk.entry(forKey: key, allowingExpired: true))
        // The photo changes on the server; a reload brings the new one into memory and to disk.
        let newPhoto = try #require(PipelineFixture.photos["ladybird.jpg"])
        fixture.server.serve("kite.jpg", ImageServer.Resource(data: newPhoto, cacheControl: "max-age=60"))
        var reload = request
        reload.cachePolicy = .reloadIgnoringCache
        let new = try await pipeline.image(for: reload)
        await pipeline.flushDiskWrites()
        // Its thumbnail's write was lost (a full backlog drops writes): the old one is still there.
        try disk.setValue(oldThumbnail.data, forKey: key, metadata: oldThumbnail.metadata)
        clock.advance(by: 61)
        let revalidated = try await pipeline.image(for: request)
        #expect(revalidated.source == .revalidated && revalidated.bitmap == new.bitmap)
        await pipeline.flushDiskWrites()
        #expect(try disk.entry(forKey: key, allowingExpired: true) == nil, "the old photo's thumbnail is gone, not made fresh")
        // A cold start shows the new photo.
        let cold = fixture.pipeline(disk: disk, storesThumbnails: true, clock: clock)
        let shown = try await cold.image(for: request)
        #expect(shown.bitmap == new.bitmap)
        await cold.flushDiskWrites()
    }

    @Test("D-H: a response that may not be stored takes the URL's decoded images of every size and its stored thumbnails with it")
    func invalidationTakesWhatWasMadeFromTheOldResponse() async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=600", clock: clock)
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk, storesThumbnails: true, clock: clock)
        let (small, large) = (
            ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64), ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 96)
        )
        let oldSmall = try await pipeline.image(for: small)
        let oldLarge = try await pipeline.image(for: large)
        await pipeline.flushDiskWrites()
        #expect(pipeline.cachedImage(for: large) != nil)
        // The photo changes, and the server now forbids storing it: a reload of one size sees it.
        clock.advance(by: 1)
        let newPhoto = try #require(PipelineFixture.photos["ladybird.jpg"])
        fixture.server.serve("kite.jpg", ImageServer.Resource(data: newPhoto, cacheControl: "no-store"))
        var reload = small
        reload.cachePolicy = .reloadIgnoringCache
        let newSmall = try await pipeline.image(for: reload)
        #expect(newSmall.bitmap != oldSmall.bitmap)
        await pipeline.flushDiskWrites()
        // The other size's decoded image went with it, and so did both stored thumbnails: the
        // same pipeline and a cold one download again and show the new photo.
        #expect(pipeline.cachedImage(for: large) == nil, "the old photo's other size is still in memory")
        let warm = try await pipeline.image(for: large)
        #expect(warm.source == .network && warm.bitmap != oldLarge.bitmap)
        let cold = fixture.pipeline(disk: disk, storesThumbnails: true, clock: clock)
        for (request, old) in [(small, oldSmall), (large, oldLarge)] {
            let shown = try await cold.image(for: request)
            #expect(shown.source == .network && shown.bitmap != old.bitmap, "a stored thumbnail of the old photo was served")
        }
        // Once the photo may be stored again, its new thumbnails are served (made after the mark).
        clock.advance(by: 1)
        fixture.server.serve("kite.jpg", ImageServer.Resource(data: newPhoto, cacheControl: "max-age=600"))
        let stored = try await cold.image(for: reload)
        await cold.flushDiskWrites()
        let later = try await fixture.pipeline(disk: disk, storesThumbnails: true, clock: clock).image(for: small)
        // The stored thumbnail is a JPEG of the new photo's pixels: the same size, within JPEG's error.
        #expect(later.source == .disk && later.bitmap.width == stored.bitmap.width && later.bitmap.height == stored.bitmap.height)
        let difference = zip(later.bitmap.pixels, stored.bitmap.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        #expect(Double(difference) / Double(stored.bitmap.pixels.count) < 8)
    }

    @Test("D-H: an image decoded from an original fetched before its URL's invalidation is delivered, not stored")
    func decodeAcrossInvalidation() async throws {
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=600")
        let pipeline = fixture.pipeline { $0.maximumConcurrentDecodes = 1 }
        // The only decode slot is held: each job below fetches its original, then waits here.
        let gate = Gate()
        let holder = pipeline.coordinator.subscribe(CoordinatorProbe.slotJob("hold", queue: .decode) { await gate.wait() }, priority: .veryHigh) {
            _ in
        }
        #expect(await pollUntil { pipeline.coordinator.runningCount(.decode) == 1 })
        let small = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)
        let old = Task { try await pipeline.image(for: small) }
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.decode) == 1 })
        // Meanwhile the photo changes and may no longer be stored: another size's reload sees it.
        fixture.server.serve("kite.jpg", ImageServer.Resource(data: try #require(PipelineFixture.photos["ladybird.jpg"]), cacheControl: "no-store"))
        var reload = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 96)
        reload.cachePolicy = .reloadIgnoringCache
        let new = Task { try await pipeline.image(for: reload) }
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.decode) == 2 })
        gate.open()
        let delivered = try await old.value
        _ = try await new.value
        #expect(delivered.source == .network, "the request that fetched the old photo still gets it")
        #expect(pipeline.cachedImage(for: small) == nil, "the old photo was stored after its URL was invalidated")
        holder.subscription.cancel()
    }

    @Test("D-G: a 304 that arrives after a newer response was stored writes nothing back over it, on disk or in memory")
    func lateNotModifiedKeepsTheNewerEntry() async throws {
        let clock = ManualClock()
        let loader = AnsweringLoader()
        let directory = try TemporaryDirectory()
        let disk = try DiskCache(directory: directory.url)
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, diskCache: disk, clock: clock))
        let request = ImageRequest(url: URL(string: "http://test/photo.jpg")!, maxPixelSize: 64)
        let (oldPhoto, newPhoto) = (try #require(PipelineFixture.photos["kite.jpg"]), try #require(PipelineFixture.photos["ladybird.jpg"]))
        func ok(_ data: Data, _ etag: String) -> DataLoadingResponse {
            DataLoadingResponse(statusCode: 200, headers: ["ETag": etag, "Cache-Control": "max-age=60", "Content-Type": "image/jpeg"], data: data)
        }
        let first = Task { try await pipeline.image(for: request) }
        #expect(await loader.waitForRequests(1))
        loader.answer(0, ok(oldPhoto, "\"v1\""))
        _ = try await first.value
        await pipeline.flushDiskWrites()
        clock.advance(by: 61)
        // The stale entry is revalidated; the 304 is held back while a reload stores a newer photo.
        let revalidating = Task { try await pipeline.image(for: request) }
        #expect(await loader.waitForRequests(2))
        #expect(loader.received[1].value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        var reload = request
        reload.cachePolicy = .reloadIgnoringCache
        let reloading = Task { try await pipeline.image(for: reload) }
        #expect(await loader.waitForRequests(3))
        loader.answer(2, ok(newPhoto, "\"v2\""))
        let newer = try await reloading.value
        await pipeline.flushDiskWrites()
        loader.answer(1, DataLoadingResponse(statusCode: 304, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"]))
        #expect(try await revalidating.value.source == .revalidated)
        await pipeline.flushDiskWrites()
        let stored = try #require(try disk.entry(forKey: request.dataKey, allowingExpired: true))
        #expect(stored.metadata.etag == "\"v2\"" && stored.data == newPhoto)
        let shown = try await pipeline.image(for: request)
        #expect(shown.bitmap == newer.bitmap && loader.received.count == 3)
        await pipeline.flushDiskWrites()
    }

    @Test("a stale entry is revalidated: If-None-Match and If-Modified-Since sent, 304, no body sent again", arguments: ["disk", "memory"])
    func staleEntryRevalidates(_ layer: String) async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=60", clock: clock)
        let pipeline = fixture.pipeline(disk: layer == "disk" ? try fixture.diskCache() : nil, clock: clock)
        let request = ImageRequest(url: fixture.url("ladybird.jpg"), maxPixelSize: 150)
        let first = try await pipeline.image(for: request)
        #expect(first.source == .network && first.bytesDownloaded == PipelineFixture.photos["ladybird.jpg"]?.count)
        clock.advance(by: 30)
        #expect(pipeline.cachedImage(for: request)?.bitmap == first.bitmap)
        clock.advance(by: 31)
        #expect(pipeline.cachedImage(for: request) == nil, "stale: the synchronous lookup must not serve it")
        let sent = fixture.server.statistics.bytesSent
        let second = try await pipeline.image(for: request)
        #expect(second.source == .revalidated && second.bitmap == first.bitmap && second.bytesDownloaded == 0)
        let statistics = fixture.server.statistics
        #expect(statistics.conditionalRequests == 1 && statistics.notModified == 1 && statistics.bytesSent == sent)
        let headers = statistics.lastHeaders["/ladybird.jpg"] ?? [:]
        #expect(headers["if-none-match"] == ImageServer.Resource(data: try #require(PipelineFixture.photos["ladybird.jpg"])).etag)
        #expect(headers["if-modified-since"] == "Tue, 14 Nov 2023 22:13:20 GMT")
        // The 304 made it fresh again: no request now.
        #expect(try await pipeline.image(for: request).source == .memory)
        #expect(fixture.server.statistics.requests == 2)
        #expect(pipeline.statistics.decodes == 1, "a 304 for an image in memory needs no decode")
        await pipeline.flushDiskWrites()
    }

    @Test("a stale entry whose image changed on the server is downloaded again and replaced")
    func staleEntryChanged() async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=60", clock: clock)
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk, clock: clock)
        let request = ImageRequest(url: fixture.url("a.jpg"), maxPixelSize: 100)
        fixture.server.serve("a.jpg", ImageServer.Resource(data: try #require(PipelineFixture.photos["kite.jpg"]), cacheControl: "max-age=60"))
        _ = try await pipeline.image(for: request)
        let grey = try #require(PipelineFixture.photos["grey.jpg"])
        fixture.server.serve("a.jpg", ImageServer.Resource(data: grey, cacheControl: "max-age=60"))
        clock.advance(by: 61)
        let second = try await pipeline.image(for: request)
        let expected = try PipelineFixture.expected("grey.jpg", maxPixelSize: 100)
        #expect(second.source == .network && second.bitmap == expected)
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: request.url!.absoluteString) == grey)
    }

    @Test("reloadIgnoringCache downloads in full and replaces both caches")
    func reload() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk)
        let url = fixture.url("b.jpg")
        fixture.server.serve("b.jpg", ImageServer.Resource(data: try #require(PipelineFixture.photos["kite.jpg"])))
        _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100))
        let ladybird = try #require(PipelineFixture.photos["ladybird.jpg"])
        fixture.server.serve("b.jpg", ImageServer.Resource(data: ladybird))
        // Still fresh: the default policy serves the old image from memory.
        #expect(try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100)).source == .memory)
        let reloaded = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100, cachePolicy: .reloadIgnoringCache))
        let expected = try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 100)
        #expect(reloaded.source == .network && reloaded.bitmap == expected)
        #expect(fixture.server.statistics.conditionalRequests == 0 && fixture.server.requests("b.jpg") == 2)
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: url.absoluteString) == ladybird)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 100))?.bitmap == expected)
    }

    @Test("revalidate asks the server even for a fresh entry, conditionally")
    func revalidatePolicy() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline(disk: try fixture.diskCache())
        let url = fixture.url("grey.jpg")
        _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100))
        let response = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100, cachePolicy: .revalidate))
        #expect(response.source == .revalidated)
        #expect(fixture.server.statistics.conditionalRequests == 1 && fixture.server.statistics.notModified == 1)
        // The 304's refresh is a queued write: done before the fixture's directory goes.
        await pipeline.flushDiskWrites()
    }

    @Test("returnCacheDataDontLoad: a miss is notCached without any request; stale entries are served")
    func offline() async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=1", clock: clock)
        let pipeline = fixture.pipeline(disk: try fixture.diskCache(), clock: clock)
        let url = fixture.url("kite.jpg")
        await #expect(throws: ImagePipelineError.notCached) {
            try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100, cachePolicy: .returnCacheDataDontLoad))
        }
        #expect(fixture.server.statistics.requests == 0)
        _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100))
        clock.advance(by: 10)
        try pipeline.removeAllCachedImages() // memory only: the disk must serve it
        let offline = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100, cachePolicy: .returnCacheDataDontLoad))
        #expect(offline.source == .disk && fixture.server.statistics.requests == 1)
        await pipeline.flushDiskWrites()
    }

    @Test("no-store is kept nowhere; no-cache is kept but revalidated every time")
    func noStoreNoCache() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk)
        let photo = try #require(PipelineFixture.photos["kite.jpg"])
        fixture.server.serve("nostore.jpg", ImageServer.Resource(data: photo, cacheControl: "no-store"))
        fixture.server.serve("nocache.jpg", ImageServer.Resource(data: photo, cacheControl: "no-cache"))
        let noStore = ImageRequest(url: fixture.url("nostore.jpg"), maxPixelSize: 100)
        #expect(try await pipeline.image(for: noStore).source == .network)
        #expect(try await pipeline.image(for: noStore).source == .network)
        await pipeline.flushDiskWrites()
        #expect(disk.statistics.count == 0 && pipeline.statistics.memoryCount == 0)
        let noCache = ImageRequest(url: fixture.url("nocache.jpg"), maxPixelSize: 100)
        #expect(try await pipeline.image(for: noCache).source == .network)
        #expect(try await pipeline.image(for: noCache).source == .revalidated)
        #expect(try await pipeline.image(for: noCache).source == .revalidated)
        await pipeline.flushDiskWrites()
        #expect(disk.statistics.count == 1 && fixture.server.statistics.notModified == 2)
    }

    @Test(
        "D2/N3: a 304 carrying only ETag and Date keeps the stored directives (max-age=60, no-cache), on disk and in memory alone",
        arguments: ["max-age=60", "no-cache"], ["disk", "memory"])
    func notModifiedKeepsStoredDirectives(_ directive: String, _ layer: String) async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(clock: clock)
        let photo = try #require(PipelineFixture.photos["grey.jpg"])
        fixture.server.serve(
            "d.jpg",
            ImageServer.Resource(
                data: photo, lastModified: Date(timeIntervalSince1970: 1_000_000_000),
                cacheControl: directive, notModifiedRepeatsHeaders: false))
        // "memory": the default configuration, no disk cache: the stale image in memory is what
        // is revalidated, and its stored headers must go into the merge.
        let pipeline = fixture.pipeline(disk: layer == "disk" ? try fixture.diskCache() : nil, clock: clock)
        let request = ImageRequest(url: fixture.url("d.jpg"), maxPixelSize: 64)
        #expect(try await pipeline.image(for: request).source == .network)
        clock.advance(by: 61)
        #expect(try await pipeline.image(for: request).source == .revalidated)
        // Without the stored directive the 304 would look like a response with only
        // Last-Modified: fresh for 10% of 23 years by the heuristic. With it: stale again after
        // 60 s (or at once for no-cache), so the server is asked again.
        clock.advance(by: 61)
        #expect(try await pipeline.image(for: request).source == .revalidated)
        #expect(fixture.server.statistics.notModified == 2 && fixture.server.statistics.conditionalRequests == 2)
        if directive == "max-age=60" {
            clock.advance(by: 30)
            #expect(try await pipeline.image(for: request).source == .memory, "fresh for 60 s after the 304")
        }
        // The 304s' refreshes are queued writes: done before the fixture's directory goes.
        await pipeline.flushDiskWrites()
    }

    @Test("R6: Vary — another value of a varied header is a miss; Vary: * is never reused")
    func vary() async throws {
        let fixture = try await PipelineFixture.start()
        let photo = try #require(PipelineFixture.photos["grey.jpg"])
        fixture.server.serve("v.jpg", ImageServer.Resource(data: photo, vary: "Accept"))
        fixture.server.serve("star.jpg", ImageServer.Resource(data: photo, vary: "*"))
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk)
        func request(_ path: String, accept: String) -> ImageRequest {
            var urlRequest = URLRequest(url: fixture.url(path))
            urlRequest.setValue(accept, forHTTPHeaderField: "Accept")
            return ImageRequest(urlRequest: urlRequest, maxPixelSize: 64)
        }
        #expect(try await pipeline.image(for: request("v.jpg", accept: "image/jpeg")).source == .network)
        #expect(try await pipeline.image(for: request("v.jpg", accept: "image/jpeg")).source == .memory)
        #expect(try await pipeline.image(for: request("v.jpg", accept: "image/png")).source == .network)
        #expect(fixture.server.requests("v.jpg") == 2)
        #expect(try await pipeline.image(for: request("star.jpg", accept: "image/jpeg")).source == .network)
        #expect(try await pipeline.image(for: request("star.jpg", accept: "image/jpeg")).source == .network)
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: fixture.url("star.jpg").absoluteString) == nil)
    }

    @Test("R6: a 206 (or any 2xx but 200 and 203) is not an image and is not stored")
    func partialContent() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk)
        fixture.server.setFault("kite.jpg", .status(206))
        await #expect(throws: ImagePipelineError.badStatus(206)) {
            try await pipeline.image(for: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64))
        }
        await pipeline.flushDiskWrites()
        #expect(disk.statistics.count == 0)
    }

    @Test("a pipeline and its disk cache are released once its work is done (no retain cycles)")
    func released() async throws {
        let fixture = try await PipelineFixture.start()
        weak var weakPipeline: ImagePipeline?
        weak var weakDisk: DiskCache?
        do {
            let disk = try fixture.diskCache()
            let pipeline = fixture.pipeline(disk: disk)
            (weakPipeline, weakDisk) = (pipeline, disk)
            _ = try await pipeline.image(for: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 100))
            let task = pipeline.imageTask(with: ImageRequest(url: fixture.url("grey.jpg"), maxPixelSize: 100))
            _ = try await task.response
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            prefetcher.startPrefetching(with: [ImageRequest(url: fixture.url("ladybird.jpg"), maxPixelSize: 100)])
            #expect(await pollUntil { prefetcher.count == 0 })
        }
        #expect(await pollUntil { weakPipeline == nil && weakDisk == nil })
    }

    @Test("a damaged disk entry is a miss: downloaded again and replaced")
    func damagedDiskEntry() async throws {
        let fixture = try await PipelineFixture.start()
        let url = fixture.url("ladybird.jpg")
        do {
            let first = fixture.pipeline(disk: try fixture.diskCache())
            _ = try await first.image(for: ImageRequest(url: url, maxPixelSize: 100))
            await first.flushDiskWrites()
        }
        let entry = fixture.directory.url.appendingPathComponent("disk/entries/" + DiskCache.entryFileName(forKey: url.absoluteString))
        var bytes = try Data(contentsOf: entry)
        bytes[bytes.count - 10] ^= 0x40
        try bytes.write(to: entry)
        let disk = try await fixture.diskCacheWhenFree()
        let pipeline = fixture.pipeline(disk: disk)
        let response = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100))
        let expected = try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 100)
        #expect(response.source == .network && response.bitmap == expected)
        #expect(fixture.server.requests("ladybird.jpg") == 2)
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: url.absoluteString) == PipelineFixture.photos["ladybird.jpg"])
    }
}

@Suite("HTTP freshness (RFC 9111)")
struct HTTPFreshnessTests {
    let requested = Date(timeIntervalSince1970: 1_700_000_000)
    var received: Date { requested.addingTimeInterval(2) }

    func stored(_ headers: [String: String], heuristic: TimeInterval = 3600) -> HTTPCacheInfo? {
        let response = DataLoadingResponse(statusCode: 200, headers: headers)
        guard
            case .store(let info) = HTTPFreshness.storage(
                for: response, to: URLRequest(url: URL(string: "http://test/a.jpg")!),
                requested: requested, received: received, rules: .init(heuristicLifetime: heuristic))
        else { return nil }
        return info
    }

    func date(_ offset: TimeInterval) -> String { HTTPDate.format(requested.addingTimeInterval(offset)) }

    @Test("max-age wins over Expires; the time in transit counts as age")
    func maxAge() throws {
        let info = try #require(stored(["Cache-Control": "public, max-age=100", "Expires": date(10_000), "Date": date(0)]))
        #expect(info.expires == received.addingTimeInterval(98))
    }

    @Test("Age received from an upstream cache shortens freshness")
    func ageHeader() throws {
        let info = try #require(stored(["Cache-Control": "max-age=100", "Age": "30", "Date": date(0)]))
        #expect(info.expires == received.addingTimeInterval(100 - 32))
    }

    @Test("Expires relative to Date; an invalid Expires is already stale")
    func expires() throws {
        let explicit = try #require(stored(["Expires": date(500), "Date": date(0)]))
        #expect(explicit.expires == received.addingTimeInterval(498))
        let invalid = try #require(stored(["Expires": "0", "Date": date(0)]))
        #expect(!invalid.isFresh(at: received))
    }

    @Test("without explicit freshness: 10% of the time since Last-Modified, else the configured heuristic")
    func heuristics() throws {
        let modified = try #require(stored(["Last-Modified": date(-10_000), "Date": date(0)]))
        #expect(modified.expires == received.addingTimeInterval(1000 - 2))
        let configured = try #require(stored(["Date": date(0)], heuristic: 600))
        #expect(configured.expires == received.addingTimeInterval(598))
    }

    @Test("no-store is not stored; no-cache (and Pragma: no-cache alone) is stored stale")
    func directives() throws {
        #expect(stored(["Cache-Control": "private, no-store"]) == nil)
        let noCache = try #require(stored(["Cache-Control": "no-cache", "ETag": "\"x\""]))
        #expect(!noCache.isFresh(at: received) && noCache.etag == "\"x\"")
        let pragma = try #require(stored(["Pragma": "no-cache"]))
        #expect(!pragma.isFresh(at: received))
        let overridden = try #require(stored(["Pragma": "no-cache", "Cache-Control": "max-age=60"]))
        #expect(overridden.isFresh(at: received))
    }

    @Test("R6: max-age is delta-seconds only (no inf, sign, point or exponent: stale), capped at 2^31")
    func deltaSeconds() throws {
        for invalid in ["inf", "-5", "1e9", "60.5", "", "0x10", "six"] {
            let info = try #require(stored(["Cache-Control": "max-age=\(invalid)", "Date": date(0)]))
            #expect(!info.isFresh(at: received), "max-age=\(invalid)")
        }
        let huge = try #require(stored(["Cache-Control": "max-age=99999999999999999999", "Date": date(0)]))
        #expect(huge.expires == received.addingTimeInterval(2_147_483_648 - 2))
        let age = try #require(stored(["Cache-Control": "max-age=100", "Age": "inf", "Date": date(0)]))
        #expect(age.expires == received.addingTimeInterval(98), "an invalid Age counts as none")
    }

    @Test("R6: a comma inside a quoted Cache-Control argument does not split the directive")
    func quotedDirectives() throws {
        let info = try #require(stored(["Cache-Control": "private=\"set-cookie, no-store\", max-age=60", "Date": date(0)]))
        #expect(info.expires == received.addingTimeInterval(58), "no-store inside quotes is an argument, not a directive")
        let expected: [String: String?] = ["a": "x\"y, z", "b": String?.none, "c": "1"]
        #expect(CacheControl.directives(#"a="x\"y, z", B , c=1"#) == expected)
    }

    @Test("HTTP dates in all three formats a recipient must accept")
    func dates() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.parse("  Sun, 06 Nov 1994 08:49:37 GMT\t") == expected, "spaces around the value")
        // Two-digit years: more than 50 years ahead means the century before (RFC 9110 §5.6.7).
        #expect(HTTPDate.parse("Tuesday, 01-Jan-30 00:00:00 GMT") == Date(timeIntervalSince1970: 1_893_456_000))
        for invalid in [
            "Thu, 30 Feb 2023 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 GMT x",
            "Sun, 06 Xyz 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994", ""
        ] {
            #expect(HTTPDate.parse(invalid) == nil, "\(invalid)")
        }
    }

    @Test("HTTP dates read and written as Foundation's DateFormatter does, over seeded instants from 1601 to 9999")
    func datesAgainstFoundation() {
        var generator = SeededGenerator()
        let reference = DateFormatter()
        reference.locale = Locale(identifier: "en_US_POSIX")
        reference.timeZone = TimeZone(identifier: "GMT")
        reference.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let asctime = DateFormatter()
        asctime.locale = reference.locale
        asctime.timeZone = reference.timeZone
        asctime.dateFormat = "EEE MMM d HH:mm:ss yyyy"
        // 1601-01-01 to 9999-12-31 (before the Gregorian reform DateFormatter counts Julian
        // days, HTTP never does), and the days around the leap days 1900, 2000 and 2100 skip
        // or keep.
        let special: [Int64] = [-2_203_891_200, 951_782_400, 951_868_800, 4_107_456_000, 4_107_542_400]
        let random = (0..<2000).map { _ in Int64.random(in: -11_644_473_600...253_402_300_799, using: &generator) }
        for seconds in special + random {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let text = HTTPDate.format(date)
            #expect(text == reference.string(from: date), "\(seconds): \(generator.replay)")
            #expect(HTTPDate.parse(text) == date, "\(text): \(generator.replay)")
            let old = asctime.string(from: date).replacingOccurrences(of: #" (\d) "#, with: "  $1 ", options: .regularExpression)
            #expect(HTTPDate.parse(old) == date, "\(old): \(generator.replay)")
        }
    }
}
