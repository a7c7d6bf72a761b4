import Foundation
import ImageCodec
@testable import ImagePipeline
import ImageServer
import Testing
import TestSupport

@Suite("Pipeline: coalescing, cancellation, priorities, prefetch", .timeLimit(.minutes(2)))
struct CoalescingTests {
    @Test("N concurrent identical requests: one download, one decode, the same pixels for all")
    func identicalRequests() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 300)
        // The answer waits until all twelve have joined: no clock decides who arrives in time.
        fixture.server.hold("kite.jpg")
        let tasks = (0..<12).map { _ in Task { try await pipeline.image(for: request) } }
        #expect(await pollUntil { pipeline.statistics.coalescedRequests == 11 && fixture.server.heldRequests == 1 })
        fixture.server.release("kite.jpg")
        var responses: [ImageResponse] = []
        for task in tasks { responses.append(try await task.value) }
        let expected = try PipelineFixture.expected("kite.jpg", maxPixelSize: 300)
        #expect(responses.count == 12 && responses.allSatisfy { $0.bitmap == expected && $0.source == .network })
        #expect(fixture.server.requests("kite.jpg") == 1)
        let statistics = pipeline.statistics
        #expect(statistics.downloads == 1 && statistics.decodes == 1 && statistics.coalescedRequests == 11)
    }

    @Test("without coalescing the same requests cost one download and one decode each")
    func withoutCoalescing() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline(coalesces: false)
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 300)
        fixture.server.hold("kite.jpg")
        let tasks = (0..<4).map { _ in Task { try await pipeline.image(for: request) } }
        // All four are at the server at once, so nothing could have been shared.
        #expect(await pollUntil { fixture.server.heldRequests == 4 })
        fixture.server.release("kite.jpg")
        for task in tasks { _ = try await task.value }
        #expect(fixture.server.requests("kite.jpg") == 4)
        #expect(pipeline.statistics.decodes == 4 && pipeline.statistics.coalescedRequests == 0)
    }

    @Test("two sizes of one URL share the download and decode separately")
    func twoSizes() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let url = fixture.url("ladybird.jpg")
        fixture.server.hold("ladybird.jpg")
        let small = Task { try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100)) }
        let large = Task { try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 400)) }
        #expect(await pollUntil { pipeline.statistics.sharedDownloads == 1 && fixture.server.heldRequests == 1 })
        fixture.server.release("ladybird.jpg")
        #expect(try await small.value.bitmap == (try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 100)))
        #expect(try await large.value.bitmap == (try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 400)))
        #expect(fixture.server.requests("ladybird.jpg") == 1)
        #expect(pipeline.statistics.decodes == 2 && pipeline.statistics.sharedDownloads == 1)
    }

    @Test("D-F: two sizes of one URL share the download when one of them is stale in memory and the other is not")
    func twoSizesOneStale() async throws {
        let clock = ManualClock()
        let fixture = try await PipelineFixture.start(cacheControl: "max-age=60", clock: clock)
        let pipeline = fixture.pipeline(clock: clock)
        let url = fixture.url("ladybird.jpg")
        _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100))
        clock.advance(by: 61)
        fixture.server.hold("ladybird.jpg")
        let stale = Task { try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 100)) }
        let missing = Task { try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 400)) }
        #expect(await pollUntil { pipeline.statistics.sharedDownloads == 1 && fixture.server.heldRequests == 1 })
        #expect(fixture.server.heldRequests == 1, "one request at a time for one URL")
        fixture.server.release("ladybird.jpg")
        #expect(try await stale.value.bitmap == (try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 100)))
        #expect(try await missing.value.bitmap == (try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 400)))
    }

    @Test("cancelling one of two subscribers leaves the other untouched; the download completes")
    func cancelOne() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 200)
        fixture.server.hold("kite.jpg")
        let cancelled = Task { try await pipeline.image(for: request) }
        let kept = Task { try await pipeline.image(for: request) }
        #expect(await pollUntil { pipeline.statistics.coalescedRequests == 1 && fixture.server.heldRequests == 1 })
        cancelled.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await cancelled.value }
        fixture.server.release("kite.jpg")
        #expect(try await kept.value.bitmap == (try PipelineFixture.expected("kite.jpg", maxPixelSize: 200)))
        #expect(fixture.server.requests("kite.jpg") == 1)
        #expect(fixture.server.statistics.abortedResponses == 0)
        #expect(pipeline.statistics.cancelledRequests == 1 && pipeline.statistics.cancelledDownloads == 0)
    }

    @Test("cancelling every subscriber closes the connection: the server sees the download abandoned, nothing is cached")
    func cancelAll() async throws {
        // 5 KB/s: the 19.6 KB photo takes about 4 s, so the cancel lands mid-body even when the
        // thread sanitizer slows the polling and the cancellation (at 20 KB/s, one run in a few
        // under TSan saw the whole body sent first).
        let fixture = try await PipelineFixture.start(throttle: ImageServer.Throttle(bytesPerSecond: 5_000))
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk)
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 200)
        let first = pipeline.imageTask(with: request)
        let second = pipeline.imageTask(with: request)
        #expect(await pollUntil { fixture.server.statistics.bytesSent > 2_000 })
        first.cancel()
        second.cancel()
        await #expect(throws: ImagePipelineError.cancelled) { try await first.response }
        await #expect(throws: ImagePipelineError.cancelled) { try await second.response }
        #expect(await pollUntil { fixture.server.statistics.abortedResponses == 1 }, "the server did not see the connection close")
        #expect(fixture.server.statistics.bytesSent < (PipelineFixture.photos["kite.jpg"]?.count ?? 0))
        #expect(await pollUntil { pipeline.statistics.cancelledDownloads == 1 })
        await pipeline.flushDiskWrites()
        #expect(disk.statistics.count == 0 && pipeline.cachedImage(for: request) == nil)
    }

    @Test("prefetch then display: no second download, no second decode")
    func prefetchThenDisplay() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let requests = ["kite.jpg", "ladybird.jpg", "grey.jpg"].map { ImageRequest(url: fixture.url($0), maxPixelSize: 300) }
        prefetcher.startPrefetching(with: requests)
        #expect(await pollUntil { prefetcher.count == 0 })
        for request in requests {
            let response = try await pipeline.image(for: request)
            #expect(response.source == .memory)
        }
        #expect(fixture.server.statistics.requests == 3)
        #expect(pipeline.statistics.decodes == 3 && pipeline.statistics.memoryHits == 3)
    }

    @Test("display joins a prefetch in flight and raises its priority; stopping the prefetch then does not cancel it")
    func displayJoinsPrefetch() async throws {
        let loader = ScriptedLoader()
        loader.set("a.jpg", try #require(PipelineFixture.photos["kite.jpg"]))
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let request = ImageRequest(url: URL(string: "http://test/a.jpg")!, maxPixelSize: 100)
        prefetcher.startPrefetching(with: [request])
        #expect(await loader.waitForStarts(1))
        let display = Task { try await pipeline.image(for: request) }
        #expect(await pollUntil { pipeline.statistics.coalescedRequests == 1 })
        prefetcher.stopPrefetching(with: [request])
        loader.finish("a.jpg")
        #expect(try await display.value.source == .network)
        #expect(loader.cancelledNames.isEmpty && loader.startedNames == ["a.jpg"])
    }

    @Test("stopping a prefetch cancels what has not started")
    func stopPrefetching() async throws {
        let loader = ScriptedLoader()
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, maximumConcurrentDownloads: 1))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let requests = (0..<4).map { ImageRequest(url: URL(string: "http://test/\($0).jpg")!, maxPixelSize: 100) }
        prefetcher.startPrefetching(with: requests)
        #expect(await loader.waitForStarts(1))
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.download) == 3 })
        prefetcher.stopPrefetching()
        #expect(await pollUntil { loader.cancelledNames.count == 1 })
        // The queued three left the queue when stopped; with no waiter left and the slot freed,
        // nothing can start later (no clock needed to see that).
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.download) == 0 && pipeline.coordinator.runningCount(.download) == 0 })
        #expect(loader.startedNames.count == 1, "queued prefetches must never start: \(loader.startedNames)")
        #expect(loader.cancelledNames == loader.startedNames)
        #expect(await pollUntil { prefetcher.count == 0 })
    }

    @Test("queued downloads start highest priority first, and a priority change re-orders them")
    func priorities() async throws {
        let loader = ScriptedLoader()
        for name in ["first", "low", "normal", "high", "raised"] { loader.set(name, try #require(PipelineFixture.photos["grey.jpg"])) }
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, maximumConcurrentDownloads: 1))
        func request(_ name: String, _ priority: ImageRequest.Priority) -> ImageRequest {
            ImageRequest(url: URL(string: "http://test/\(name)")!, maxPixelSize: 64, priority: priority)
        }
        let first = pipeline.imageTask(with: request("first", .normal))
        #expect(await loader.waitForStarts(1))
        let tasks = [
            pipeline.imageTask(with: request("low", .low)), pipeline.imageTask(with: request("normal", .normal)),
            pipeline.imageTask(with: request("raised", .veryLow)), pipeline.imageTask(with: request("high", .high))
        ]
        // All four wait for the single download slot before anything is released.
        #expect(await pollUntil { pipeline.coordinator.waitingCount(.download) == 4 })
        tasks[2].priority = .veryHigh // queued at veryLow, now the most urgent
        for expected in ["first", "raised", "high", "normal", "low"] {
            #expect(await pollUntil { loader.startedNames.last == expected }, "expected \(expected) next, started \(loader.startedNames)")
            loader.finish(expected)
        }
        _ = try await first.response
        for task in tasks { _ = try await task.response }
    }

    @Test("an ImageTask's event stream is made only when read; one read after the end gets just the result")
    func lazyEvents() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let task = pipeline.imageTask(with: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64))
        let response = try await task.response
        #expect(!task.hasEventStream, "nobody asked for events: no stream, no buffered progress")
        var events: [ImageTask.Event] = []
        for await event in task.events { events.append(event) }
        guard events.count == 1, case .finished(.success(let delivered)) = events[0] else {
            Issue.record("events: \(events)")
            return
        }
        #expect(delivered.bitmap == response.bitmap)
    }

    @Test("ImageTask reports progress, then exactly one result, to the stream and the completion")
    func imageTaskEvents() async throws {
        let fixture = try await PipelineFixture.start(throttle: ImageServer.Throttle(bytesPerSecond: 200_000))
        let pipeline = fixture.pipeline()
        let completions = CallCounter()
        let task = pipeline.imageTask(with: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 120)) { result in
            if case .success = result { completions.increment() }
        }
        var progress: [Int] = []
        var finished = 0
        for await event in task.events {
            switch event {
            case .progress(let received, let expected):
                progress.append(received)
                #expect(expected == PipelineFixture.photos["kite.jpg"]?.count)
            case .finished(let result):
                finished += 1
                #expect(try result.get().bitmap.width == 120)
            }
        }
        #expect(finished == 1 && progress.count > 1 && progress == progress.sorted())
        #expect(await pollUntil { completions.value == 1 })
        #expect(try task.result?.get().source == .network)
    }
}
