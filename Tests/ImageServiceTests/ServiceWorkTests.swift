import Foundation
import ImageCodec
import ImageServer
@testable import ImageService
import Testing
import TestSupport

/// Scheduling over real sockets: shared work, cancellation when a client leaves, downloads that
/// never hold a worker, and the result cache.
@Suite("Service: work, coalescing and caching over HTTP", .timeLimit(.minutes(2)))
struct ServiceWorkTests {
    @Test("20 identical concurrent requests: one origin request, one decode, 20 identical answers")
    func identicalRequests() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.hold("/kite.jpg")
        let path = harness.path("rs:fill:160:160", harness.source("kite.jpg"))
        let replies = (0..<20).map { _ in Task { try await harness.get(path) } }
        // All 20 are in the service, sharing the one fetch the origin is holding.
        #expect(await pollUntil { harness.origin.statistics.requests == 1 })
        _ = await pollUntil(timeout: .seconds(20)) { harness.service.statistics.coalescedRequests >= 19 }
        harness.origin.release("/kite.jpg")
        var bodies = Set<Data>()
        for reply in replies {
            let answer = try await reply.value
            #expect(answer.status == 200)
            bodies.insert(answer.body)
        }
        #expect(bodies.count == 1)
        #expect(harness.origin.requests("/kite.jpg") == 1)
        #expect(harness.service.statistics.decodes == 1)
        await harness.stop()
    }

    @Test("a source to revalidate on every use (no-cache): requests arriving while it renders join the render, the origin sees one request")
    func hotURLWithSourceToRevalidate() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate)
        // Stale at once, like a photo uploaded a second ago (heuristic freshness: 10% of its
        // age): any later fetch of this source through the pipeline revalidates it.
        harness.origin.serve("/new.jpg", .init(data: try SmallPhotos.data("kite.jpg"), etag: "\"v1\"", cacheControl: "no-cache"))
        let path = harness.path("rs:fit:100:100", harness.source("new.jpg"))
        let first = Task { try await harness.get(path) }
        #expect(await gate.waitForArrivals(1), "the first request's render holds its worker, its source downloaded")
        let later = (0..<9).map { _ in Task { try await harness.get(path) } }
        #expect(await pollUntil { harness.service.statistics.coalescedRequests >= 9 })
        gate.open()
        var bodies = Set<Data>()
        for reply in [first] + later {
            let answer = try await reply.value
            #expect(answer.status == 200)
            bodies.insert(answer.body)
        }
        #expect(bodies.count == 1)
        #expect(harness.origin.requests("/new.jpg") == 1 && harness.service.statistics.decodes == 1)
        await harness.stop()
    }

    @Test("different options on one source share the fetch, each decoded once")
    func differentOptionsShareFetch() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.hold("/ladybird.jpg")
        let sizes = ["rs:fit:100:100", "rs:fill:64:64", "rs:force:30:90"]
        let replies = sizes.map { options in Task { try await harness.get(harness.path(options, harness.source("ladybird.jpg"))) } }
        #expect(await pollUntil { harness.origin.statistics.requests == 1 })
        _ = await pollUntil(timeout: .seconds(20)) { harness.service.pipeline.statistics.coalescedRequests >= 2 }
        harness.origin.release("/ladybird.jpg")
        var shapes: [String] = []
        for reply in replies {
            let bitmap = try ImageDecoder().decode(try await reply.value.body)
            shapes.append("\(bitmap.width)x\(bitmap.height)")
        }
        #expect(shapes == ["100x63", "64x64", "30x90"])
        #expect(harness.origin.requests("/ladybird.jpg") == 1 && harness.service.statistics.decodes == 3)
        await harness.stop()
    }

    @Test("plain and base64 sources, long and short option names: one result-cache entry, one decode, one fetch")
    func oneResultEntry() async throws {
        let harness = try await ServiceHarness.start(diskCache: true)
        let source = harness.source("kite.jpg")
        let spellings = [
            harness.path("rs:fill:120:90", source), harness.path("resize:fill:120:90:0", source, plain: true),
            harness.path("s:120:90/rt:fill/g:ce", source, ext: "jpg"), harness.path("w:120/h:90/resizing_type:fill", source, ext: "jpeg", plain: true)
        ]
        var bodies = Set<Data>()
        var layers: [String] = []
        for path in spellings {
            let reply = try await harness.get(path)
            #expect(reply.status == 200)
            bodies.insert(reply.body)
            layers.append(reply.header("Image-Engine-Cache") ?? "")
        }
        #expect(bodies.count == 1 && layers == ["origin", "result-memory", "result-memory", "result-memory"])
        #expect(harness.service.statistics.decodes == 1 && harness.origin.requests("/kite.jpg") == 1)
        await harness.service.flush()
        #expect(harness.service.results.counts.disk == 1)
        // cachebuster exists to force a fresh result: a new entry and a new decode (the source comes from memory).
        let busted = try await harness.get(harness.path("rs:fill:120:90/cb:2", source))
        #expect(busted.header("Image-Engine-Cache") == "source-memory" && harness.service.statistics.decodes == 2)
        #expect(busted.header("ETag") != (try await harness.get(spellings[0])).header("ETag"))
        await harness.stop()
    }

    @Test("by default a URL's first request leaves nothing in the memory caches; its second fills them, its third is a hit")
    func memoryCachesOnSecondUse() async throws {
        let harness = try await ServiceHarness.start { $0.memoryCacheMinimumUses = ThumbnailService.Configuration(keys: []).memoryCacheMinimumUses }
        #expect(harness.service.configuration.memoryCacheMinimumUses == 2)
        let path = harness.path("rs:fit:120:90", harness.source("kite.jpg"))
        var layers: [String] = []
        for _ in 0..<3 {
            let reply = try await harness.get(path)
            #expect(reply.status == 200)
            layers.append(reply.header("Image-Engine-Cache") ?? "")
        }
        // The second request downloads and renders again (a CDN in front would have answered it).
        #expect(layers == ["origin", "origin", "result-memory"])
        #expect(harness.service.statistics.decodes == 2 && harness.origin.requests("/kite.jpg") == 2)
        // The source was kept at its second download too: another size of it needs no download.
        let other = try await harness.get(harness.path("rs:fit:60:45", harness.source("kite.jpg")))
        #expect(other.header("Image-Engine-Cache") == "source-memory" && harness.origin.requests("/kite.jpg") == 2)
        await harness.stop()
    }

    @Test("a result-memory hit sends the stored bytes themselves: two answers share one buffer, the HEAD's is empty")
    func resultHitsShareTheirBytes() async throws {
        let harness = try await ServiceHarness.start()
        let path = harness.path("rs:fit:120:120", harness.source("kite.jpg"))
        let first = await harness.service.respond(to: ServiceRequest(path: path))
        let hit = await harness.service.respond(to: ServiceRequest(path: path))
        let head = await harness.service.respond(to: ServiceRequest(method: "HEAD", path: path))
        #expect(first.status == 200 && hit.cacheLayer == "result-memory" && hit.body.count > 1000)
        let addresses = [first, hit].map { response in response.body.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } }
        #expect(addresses[0] == addresses[1], "a hit copied the body")
        #expect(head.body.isEmpty && head.headers.first { $0.name == "Content-Length" }?.value == String(hit.body.count))
        await harness.stop()
    }

    @Test("without a format, a source with alpha gets PNG even after an explicit JPEG of it was cached, and the reverse")
    func formatResolvedAgainstSource() async throws {
        let harness = try await ServiceHarness.start()
        let source = harness.source("calla.png")
        let jpeg = try await harness.get(harness.path("rs:fit:100:100/f:jpg", source))
        let auto = try await harness.get(harness.path("rs:fit:100:100", source))
        let png = try await harness.get(harness.path("rs:fit:100:100", source, ext: "png"))
        #expect(jpeg.header("Content-Type") == "image/jpeg" && auto.header("Content-Type") == "image/png")
        #expect(png.body == auto.body && png.header("Image-Engine-Cache") == "result-memory" && png.header("ETag") == auto.header("ETag"))
        #expect(jpeg.header("ETag") != auto.header("ETag") && harness.service.statistics.decodes == 2)
        // An opaque source: no format and f:jpg are one result.
        let opaque = try await harness.get(harness.path("rs:fit:100:100/f:jpg", harness.source("grey.jpg")))
        let opaqueAuto = try await harness.get(harness.path("rs:fit:100:100", harness.source("grey.jpg")))
        #expect(opaqueAuto.header("Image-Engine-Cache") == "result-memory" && opaqueAuto.body == opaque.body)
        await harness.stop()
    }

    @Test("a result on disk is served by a new service without touching the source")
    func resultDiskSurvivesRestart() async throws {
        let directory = try TemporaryDirectory()
        let path: String
        let body: Data
        do {
            let harness = try await ServiceHarness.start { $0.cacheDirectory = directory.url }
            path = harness.path("rs:fit:90:90", harness.source("grey.jpg"))
            body = try await harness.get(path).body
            await harness.stop()
        }
        // Each origin listens on a new port, so the path is signed against a URL no origin serves now.
        let second = try await ServiceHarness.start { $0.cacheDirectory = directory.url }
        let reply = try await second.get(path)
        #expect(reply.status == 200 && reply.body == body && reply.header("Image-Engine-Cache") == "result-disk")
        #expect(second.service.statistics.resultHits == 1 && second.service.statistics.decodes == 0)
        await second.stop()
    }

    @Test("If-None-Match for a result not in the cache: the source is fetched for its validator, 304, nothing decoded")
    func notModifiedWithoutDecode() async throws {
        let first = try await ServiceHarness.start()
        first.origin.serve("/shared.jpg", ImageServer.Resource(data: try SmallPhotos.data("kite.jpg"), etag: "\"v1\""))
        let etag = try #require(try await first.get(first.path("rs:fill:100:100", first.source("shared.jpg"))).header("ETag"))
        await first.stop()

        let second = try await ServiceHarness.start()
        second.origin.serve("/shared.jpg", ImageServer.Resource(data: try SmallPhotos.data("kite.jpg"), etag: "\"v1\""))
        let reply = try await second.get(second.path("rs:fill:100:100", second.source("shared.jpg")), headers: [("If-None-Match", etag)])
        #expect(reply.status == 304 && reply.header("ETag") == etag && reply.body.isEmpty)
        #expect(second.service.statistics.decodes == 0 && second.origin.requests("/shared.jpg") == 1)
        // A new validator at the source is a new ETag: the old one no longer matches.
        second.origin.serve("/changed.jpg", ImageServer.Resource(data: try SmallPhotos.data("kite.jpg"), etag: "\"v2\""))
        let changed = try await second.get(second.path("rs:fill:100:100", second.source("changed.jpg")), headers: [("If-None-Match", etag)])
        #expect(changed.status == 200 && changed.header("ETag") != etag)
        await second.stop()
    }

    @Test("a client that disconnects while queued leaves the queue, and its work is never done")
    func disconnectWhileQueued() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate) {
            $0.workers = 1
            $0.queueLimit = 1
        }
        let running = Task { try await harness.get(harness.path("w:70", harness.source("kite.jpg"))) }
        #expect(await gate.waitForArrivals(1))
        let leaving = try RawConnection(port: harness.port, path: harness.path("w:70", harness.source("ladybird.jpg")))
        #expect(await pollUntil { harness.service.admission.snapshot.waiting >= 1 })
        leaving.close()
        _ = await pollUntil(timeout: .seconds(20)) { harness.service.admission.snapshot.waiting == 0 }
        #expect(harness.service.admission.snapshot.waiting == 0, "the slot in the queue is free again")
        // So the next request queues instead of being refused.
        let next = Task { try await harness.get(harness.path("w:70", harness.source("grey.jpg"))) }
        #expect(await pollUntil { harness.service.admission.snapshot.waiting >= 1 })
        gate.open()
        #expect(try await running.value.status == 200)
        #expect(try await next.value.status == 200)
        #expect(harness.service.statistics.decodes == 2 && gate.count == 2, "the one that left was never decoded")
        await harness.stop()
    }

    @Test("a render that does not fit the memory budget beside a running one waits its turn instead of a 429")
    func renderWaitsForMemory() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate) {
            $0.workers = 2
            $0.memoryBudget = 10 << 20
        }
        // 700² in WebP: about 6.2 MB planned (decode and encoder), so one fits in 10 MiB and two do not.
        let options = "rs:fit:700:700/el:1/f:webp"
        let first = Task { try await harness.get(harness.path(options, harness.source("kite.jpg"))) }
        #expect(await gate.waitForArrivals(1))
        #expect(harness.service.memory.bytesInUse > 5 << 20, "the premise: a second render does not fit beside the first")
        let second = Task { try await harness.get(harness.path(options, harness.source("ladybird.jpg"))) }
        #expect(await pollUntil { harness.service.admission.snapshot.waiting == 1 })
        #expect(harness.service.admission.snapshot == .init(busy: 1, waiting: 1), "a worker is free: it waits for memory")
        gate.open()
        let replies = [try await first.value, try await second.value]
        #expect(replies.map(\.status) == [200, 200], "\(replies.map(\.text))")
        #expect(harness.service.statistics.decodes == 2 && harness.service.memory.bytesInUse < 1 << 20)
        await harness.stop()
    }

    @Test("D-D: a source on disk is charged to the memory budget before it is read: with no room it is 429 and nothing is read")
    func diskHitReservedBeforeRead() async throws {
        // No memory caches: what the budget holds after a request is what the request still holds.
        let harness = try await ServiceHarness.start(diskCache: true) {
            $0.sourceMemoryLimit = 0
            $0.resultMemoryLimit = 0
        }
        #expect(try await harness.get(harness.path("rs:fit:80:80", harness.source("kite.jpg"))).status == 200)
        await harness.service.pipeline.flushDiskWrites()
        let disk = try #require(harness.service.pipeline.configuration.diskCache)
        let sourceURL = try #require(URL(string: harness.source("kite.jpg")))
        let stored = try #require(harness.service.pipeline.storedOriginalSize(for: harness.service.sourceRequest(sourceURL)))
        // Less room left than the stored source: the next size's request may not read it.
        let filler = harness.service.memory.capacity - harness.service.memory.bytesInUse - stored / 2
        #expect(harness.service.memory.reserve(filler))
        let hits = disk.statistics.counters.hits
        let refused = try await harness.get(harness.path("rs:fit:81:80", harness.source("kite.jpg")))
        #expect(refused.status == 429 && refused.text.contains("no memory left"), "\(refused.status) \(refused.text)")
        #expect(disk.statistics.counters.hits == hits, "the source was read from disk before the budget was asked")
        harness.service.memory.release(filler)
        #expect(try await harness.get(harness.path("rs:fit:81:80", harness.source("kite.jpg"))).status == 200)
        #expect(disk.statistics.counters.hits == hits + 1 && harness.origin.statistics.requests == 1)
        #expect(await pollUntil { harness.service.memory.bytesInUse == 0 })
        await harness.stop()
    }

    @Test("a client that disconnects while its render holds a worker: the decode is skipped and the worker freed")
    func disconnectWhileAdmitted() async throws {
        let gate = Gate()
        let harness = try await ServiceHarness.start(gate: gate) { $0.workers = 1 }
        let leaving = try RawConnection(port: harness.port, path: harness.path("w:70", harness.source("kite.jpg")))
        #expect(await gate.waitForArrivals(1))
        leaving.close()
        // The request's task is cancelled as soon as the server sees the connection go.
        let deadline = ContinuousClock.now + .seconds(20)
        _ = await pollUntil(timeout: deadline - .now) { harness.service.renders.count == 0 }
        gate.open()
        _ = await pollUntil(timeout: deadline - .now) { harness.service.admission.snapshot.busy == 0 }
        #expect(harness.service.admission.snapshot.busy == 0 && harness.service.statistics.decodes == 0)
        #expect(try await harness.get(harness.path("w:70", harness.source("ladybird.jpg"))).status == 200)
        await harness.stop()
    }

    @Test("graceful shutdown: the service drains at once, the request in flight finishes, then run returns")
    func gracefulShutdown() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.hold("/kite.jpg")
        let inFlight = Task { try await harness.get(harness.path("w:40", harness.source("kite.jpg"))) }
        #expect(await pollUntil { harness.origin.statistics.requests == 1 })
        let stopping = Task { await harness.server.shutDown() }
        _ = await pollUntil(timeout: .seconds(20)) { harness.service.isDraining }
        #expect(harness.service.isDraining && !harness.service.isReady)
        #expect(await harness.service.respond(to: ServiceRequest(path: "/ready")).status == 503)
        harness.origin.release("/kite.jpg")
        let reply = try await inFlight.value
        #expect(reply.status == 200 && reply.header("Content-Type") == "image/jpeg")
        await stopping.value
        await harness.stop()
    }

    @Test("a slow origin holds no worker: a fast request completes while slow ones download")
    func slowOriginHoldsNoWorker() async throws {
        let harness = try await ServiceHarness.start { $0.workers = 1 }
        harness.origin.hold("/kite.jpg")
        harness.origin.serve("/kite-2.jpg", ImageServer.Resource(data: try SmallPhotos.data("kite.jpg")))
        harness.origin.hold("/kite-2.jpg")
        let slow = [
            Task { try await harness.get(harness.path("w:50", harness.source("kite.jpg"))) },
            Task { try await harness.get(harness.path("w:50", harness.source("kite-2.jpg"))) }
        ]
        #expect(await pollUntil { harness.origin.statistics.requests == 2 })
        let fast = try await harness.get(harness.path("w:50", harness.source("ladybird.jpg")))
        #expect(fast.status == 200 && harness.origin.heldRequests == 2, "answered while both slow downloads are still held")
        harness.origin.release("/kite.jpg")
        harness.origin.release("/kite-2.jpg")
        for task in slow { #expect(try await task.value.status == 200) }
        await harness.stop()
    }
}
