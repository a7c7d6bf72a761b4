import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import ImagePipeline
import Testing
import TestSupport

/// The prefetcher's bookkeeping (D3): registered before it starts, removed by identity, one
/// prefetch per key however starts race, and stopped when the prefetcher goes away.
@Suite("Pipeline: prefetcher life cycle", .timeLimit(.minutes(2)))
struct PrefetcherTests {
    /// Answers every request at once with a 404: prefetches that end as soon as they start.
    struct InstantFailure: DataLoading {
        func loadData(
            for request: URLRequest, maximumBodySize: Int,
            progress: @escaping @Sendable (Int, Int?) -> Void
        ) async throws(DataLoadingError) -> DataLoadingResponse {
            DataLoadingResponse(statusCode: 404)
        }
    }

    @Test("the scripted loader answers .cancelled to a task cancelled before it registers, instead of waiting for ever")
    func scriptedLoaderCancelledFirst() async throws {
        let loader = ScriptedLoader()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await loader.loadData(for: URLRequest(url: URL(string: "http://test/a.jpg")!), maximumBodySize: 1 << 20) { _, _ in }
        }
        await #expect(throws: DataLoadingError.cancelled) { try await task.value }
        #expect(loader.cancelledNames == ["a.jpg"])
    }

    @Test("a prefetch decodes on a .utility thread, a visible request on a .userInitiated one")
    func prefetchDecodesAtLowerQoS() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let seen = NSLock()
        nonisolated(unsafe) var qualities: [DispatchQoS.QoSClass] = []
        pipeline.coordinator.observeThreadQoS { qos in seen.withLock { qualities.append(qos) } }
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching(with: [ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)])
        #expect(await pollUntil { prefetcher.count == 0 })
        #expect(seen.withLock { qualities } == [.utility])
        let visible = try await pipeline.image(for: ImageRequest(url: fixture.url("ladybird.jpg"), maxPixelSize: 64))
        #expect(visible.bitmap.width <= 64)
        #expect(seen.withLock { qualities } == [.utility, .userInitiated])
    }

    @Test("prefetches that end at once are not left listed: the count returns to 0 and each key can be prefetched again")
    func instantFinishes() async throws {
        let pipeline = ImagePipeline(configuration: .init(dataLoader: InstantFailure()))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let requests = (0..<300).map { ImageRequest(url: URL(string: "http://test/\($0).jpg")!, maxPixelSize: 64) }
        for _ in 0..<3 {
            prefetcher.startPrefetching(with: requests)
            #expect(await pollUntil { prefetcher.count == 0 }, "still listed: \(prefetcher.count)")
        }
        #expect(pipeline.statistics.networkRequests == 900, "every round prefetched every key again")
    }

    @Test("concurrent starts for one key make one prefetch, and stopping it leaves nothing running")
    func concurrentStarts() async throws {
        let loader = ScriptedLoader()
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let request = ImageRequest(url: URL(string: "http://test/a.jpg")!, maxPixelSize: 64)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { prefetcher.startPrefetching(with: [request]) } }
        }
        #expect(await loader.waitForStarts(1))
        #expect(prefetcher.count == 1)
        prefetcher.stopPrefetching()
        // No orphaned subscription keeps the download alive: it is cancelled.
        #expect(await pollUntil { loader.cancelledNames == ["a.jpg"] })
        #expect(await pollUntil { pipeline.coordinator.jobCount == 0 })
    }

    @Test("a prefetcher that goes away stops its prefetches")
    func deinitStops() async throws {
        let loader = ScriptedLoader()
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader))
        do {
            let prefetcher = ImagePrefetcher(pipeline: pipeline)
            prefetcher.startPrefetching(with: [ImageRequest(url: URL(string: "http://test/b.jpg")!, maxPixelSize: 64)])
            #expect(await loader.waitForStarts(1))
        }
        #expect(await pollUntil { loader.cancelledNames == ["b.jpg"] })
    }

    @Test("stopping and restarting a key: the first prefetch's end, arriving late, does not remove the second")
    func identity() async throws {
        let loader = ScriptedLoader()
        loader.set("c.jpg", try #require(PipelineFixture.photos["grey.jpg"]))
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let request = ImageRequest(url: URL(string: "http://test/c.jpg")!, maxPixelSize: 64)
        // A display request keeps the job alive, so the first prefetch's subscription can end
        // (stopped) while the work it started goes on and finishes later.
        let display = pipeline.imageTask(with: request)
        prefetcher.startPrefetching(with: [request])
        #expect(await loader.waitForStarts(1))
        let first = try #require(prefetcher.prefetchID(for: request))
        prefetcher.stopPrefetching(with: [request])
        prefetcher.startPrefetching(with: [request])
        let second = try #require(prefetcher.prefetchID(for: request))
        #expect(second != first && prefetcher.count == 1)
        // The window itself: the first prefetch's end is delivered only now, after the restart
        // (its job may finish on another thread just as the caller stops and restarts).
        let key = pipeline.prefetchKey(
            for: {
                var request = request; request.priority = .low; return request
            }())
        prefetcher.finished(key, id: first)
        #expect(prefetcher.count == 1 && prefetcher.prefetchID(for: request) == second, "a late end removed the newer prefetch")
        loader.finish("c.jpg")
        _ = try await display.response
        #expect(await pollUntil { prefetcher.count == 0 })
        #expect(loader.startedNames == ["c.jpg"])
    }
}
