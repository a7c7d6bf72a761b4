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

/// RFC 9111 rules beyond freshness: coalescing respects `Vary` (N7), a 304 about another
/// representation is not merged (N8), only GET is cached, and a shared cache keeps no `private`
/// response and honours `s-maxage`.
@Suite("Pipeline: HTTP caching rules", .timeLimit(.minutes(2)))
struct HTTPCachingRulesTests {
    /// Answers each request with the next scripted response, and records what it was asked.
    final class ScriptedResponses: DataLoading, @unchecked Sendable {
        private let lock = NSLock()
        private var responses: [DataLoadingResponse]
        private var seen: [URLRequest] = []

        init(_ responses: [DataLoadingResponse]) { self.responses = responses }

        var requests: [URLRequest] { lock.withLock { seen } }

        func loadData(
            for request: URLRequest, maximumBodySize: Int, progress: @escaping @Sendable (Int, Int?) -> Void
        ) async throws(DataLoadingError) -> DataLoadingResponse {
            lock.withLock {
                seen.append(request)
                return responses.isEmpty ? DataLoadingResponse(statusCode: 500) : responses.removeFirst()
            }
        }
    }

    static let grey = PipelineFixture.photos["grey.jpg"]!
    static let kite = PipelineFixture.photos["kite.jpg"]!

    @Test("N7: two requests in flight that differ in a header the response varies on are not coalesced")
    func coalescingRespectsVary() async throws {
        let fixture = try await PipelineFixture.start()
        fixture.server.serve("v.jpg", ImageServer.Resource(data: Self.grey, vary: "Accept"))
        fixture.server.hold("v.jpg")
        let pipeline = fixture.pipeline()
        func request(_ accept: String) -> ImageRequest {
            var urlRequest = URLRequest(url: fixture.url("v.jpg"))
            urlRequest.setValue(accept, forHTTPHeaderField: "Accept")
            return ImageRequest(urlRequest: urlRequest, maxPixelSize: 64)
        }
        // The second starts once the first is on the wire: libcurl (under URLSession on Linux)
        // may otherwise hold a transfer back to reuse a connection still being set up, which
        // here is held, and the second request would only leave after the release. The waits
        // are long because under TSan, beside the stress tests that run in parallel, a POST
        // once took more than 10 s to leave URLSession; they end as soon as the server sees it.
        let jpeg = pipeline.imageTask(with: request("image/jpeg"))
        #expect(await pollUntil(timeout: .seconds(60)) { fixture.server.requests("v.jpg") == 1 })
        let png = pipeline.imageTask(with: request("image/png"))
        let same = pipeline.imageTask(with: request("image/jpeg"))
        // Two requests reach the server (one per Accept value), the identical third joins the first.
        #expect(await pollUntil(timeout: .seconds(60)) { fixture.server.requests("v.jpg") == 2 })
        fixture.server.release("v.jpg")
        for task in [jpeg, png, same] { _ = try await task.response }
        #expect(fixture.server.requests("v.jpg") == 2 && pipeline.statistics.coalescedRequests == 1)
    }

    @Test("two requests in flight that send different bodies are not coalesced; the same body joins")
    func coalescingRespectsTheBody() async throws {
        let fixture = try await PipelineFixture.start()
        fixture.server.serve("q.jpg", ImageServer.Resource(data: Self.grey))
        fixture.server.hold("q.jpg")
        let pipeline = fixture.pipeline()
        func request(_ body: String) -> ImageRequest {
            var urlRequest = URLRequest(url: fixture.url("q.jpg"))
            urlRequest.httpMethod = "POST"
            urlRequest.httpBody = Data(body.utf8)
            return ImageRequest(urlRequest: urlRequest, maxPixelSize: 64)
        }
        // The second starts once the first is on the wire (see coalescingRespectsVary).
        let red = pipeline.imageTask(with: request("{\"colour\":\"red\"}"))
        #expect(await pollUntil(timeout: .seconds(60)) { fixture.server.requests("q.jpg") == 1 })
        let blue = pipeline.imageTask(with: request("{\"colour\":\"blue\"}"))
        let again = pipeline.imageTask(with: request("{\"colour\":\"red\"}"))
        #expect(await pollUntil(timeout: .seconds(60)) { fixture.server.requests("q.jpg") == 2 })
        fixture.server.release("q.jpg")
        for task in [red, blue, again] { _ = try await task.response }
        #expect(fixture.server.requests("q.jpg") == 2 && pipeline.statistics.coalescedRequests == 1)
    }

    @Test("a 304's Content-Type does not replace the stored one: the stored bytes keep their type")
    func notModifiedKeepsContentType() {
        let stored = HTTPCacheInfo(contentType: "image/jpeg", etag: "\"a\"", expires: nil, headers: ["content-type": "image/jpeg", "etag": "\"a\""])
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let answer = DataLoadingResponse(
            statusCode: 304, headers: ["content-type": "text/html", "etag": "\"a\"", "cache-control": "max-age=60"])
        let storage = HTTPFreshness.revalidated(
            stored, by: answer, to: URLRequest(url: URL(string: "http://test/a.jpg")!), requested: now, received: now,
            rules: .init(heuristicLifetime: 0, isShared: false, requestHasAuthorization: false))
        guard case .store(let info) = storage else {
            Issue.record("the refreshed entry was not stored")
            return
        }
        #expect(info.contentType == "image/jpeg" && info.headers["content-type"] == "image/jpeg")
        #expect(info.headers["cache-control"] == "max-age=60", "the 304's other fields are merged")
    }

    @Test("a pipeline whose limits refuse an original it finds on a shared disk leaves it there for the others")
    func limitsDoNotCondemnBytes() async throws {
        let fixture = try await PipelineFixture.start()
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64)
        let disk = try fixture.diskCache()
        let first = fixture.pipeline(disk: disk)
        _ = try await first.image(for: request)
        await first.flushDiskWrites()
        let strict = fixture.pipeline(disk: disk) {
            var limits = DecodingLimits()
            limits.maxPixelCount = 1000
            $0.decodingLimits = limits
        }
        await #expect(throws: ImagePipelineError.self) { _ = try await strict.image(for: request) }
        await strict.flushDiskWrites()
        // A third pipeline, nothing in memory: the original is still on disk.
        let roomy = fixture.pipeline(disk: disk)
        let response = try await roomy.image(for: request)
        #expect(response.source == .disk && fixture.server.statistics.requests == 1, "\(response.source)")
        await roomy.flushDiskWrites()
    }

    @Test("N8: a 304 whose strong ETag is not the stored one updates nothing: the image is asked for again, plainly")
    func notModifiedForAnotherRepresentation() async throws {
        let clock = ManualClock()
        let loader = ScriptedResponses([
            DataLoadingResponse(statusCode: 200, headers: ["ETag": "\"a\"", "Cache-Control": "max-age=60"], data: Self.grey),
            DataLoadingResponse(statusCode: 304, headers: ["ETag": "\"b\"", "Cache-Control": "max-age=3600"]),
            DataLoadingResponse(statusCode: 200, headers: ["ETag": "\"b\"", "Cache-Control": "max-age=3600"], data: Self.kite)
        ])
        let directory = try TemporaryDirectory()
        let disk = try DiskCache(directory: directory.url)
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, diskCache: disk, clock: clock))
        let request = ImageRequest(url: URL(string: "http://test/n8.jpg")!, maxPixelSize: 100)
        _ = try await pipeline.image(for: request)
        clock.advance(by: 61)
        let second = try await pipeline.image(for: request)
        let kite = try PipelineFixture.expected("kite.jpg", maxPixelSize: 100)
        #expect(second.source == .network && second.bitmap == kite)
        let sent = loader.requests
        #expect(sent.count == 3)
        #expect(sent[1].value(forHTTPHeaderField: "If-None-Match") == "\"a\"")
        #expect(sent[2].value(forHTTPHeaderField: "If-None-Match") == nil, "the retry must not be conditional")
        await pipeline.flushDiskWrites()
        #expect(try disk.entry(forKey: "http://test/n8.jpg")?.metadata.etag == "\"b\"")
        #expect(try disk.value(forKey: "http://test/n8.jpg") == Self.kite)
    }

    @Test("only GET is cached: a POST's answer is neither stored nor served from a GET's entry, a HEAD's is not an image")
    func onlyGetIsCached() async throws {
        let loader = ScriptedResponses([
            DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "max-age=3600"], data: Self.grey),
            DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "max-age=3600"], data: Self.kite),
            DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "max-age=3600"], data: Data())
        ])
        let directory = try TemporaryDirectory()
        let disk = try DiskCache(directory: directory.url)
        let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, diskCache: disk))
        let url = URL(string: "http://test/m.jpg")!
        let get = ImageRequest(url: url, maxPixelSize: 100)
        #expect(try await pipeline.image(for: get).source == .network)
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        let posted = try await pipeline.image(for: ImageRequest(urlRequest: post, maxPixelSize: 100))
        let kite = try PipelineFixture.expected("kite.jpg", maxPixelSize: 100)
        #expect(posted.source == .network && posted.bitmap == kite)
        var head = URLRequest(url: url)
        head.httpMethod = "HEAD"
        await #expect(throws: ImagePipelineError.notAnImage(.empty)) {
            try await pipeline.image(for: ImageRequest(urlRequest: head, maxPixelSize: 100))
        }
        #expect(loader.requests.map(\.httpMethod) == ["GET", "POST", "HEAD"])
        await pipeline.flushDiskWrites()
        // The POST's answer invalidated the stored GET response (RFC 9111 §4.4) and was not stored itself.
        #expect(try disk.value(forKey: url.absoluteString) == nil)
        // Neither is the GET's decoded image, at the size it was shown or another (D-H).
        for size in [100, 120] {
            await #expect(throws: ImagePipelineError.notCached) {
                try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: size, cachePolicy: .returnCacheDataDontLoad))
            }
        }
    }

    @Test("a shared cache stores no private response and takes s-maxage over max-age; a private cache does the opposite")
    func sharedCache() async throws {
        for shared in [false, true] {
            let clock = ManualClock()
            let loader = ScriptedResponses([
                DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "private, max-age=3600"], data: Self.grey),
                DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "max-age=3600, s-maxage=10", "ETag": "\"s\""], data: Self.kite),
                DataLoadingResponse(statusCode: 200, headers: ["Cache-Control": "private, max-age=3600"], data: Self.grey),
                DataLoadingResponse(statusCode: 304, headers: ["ETag": "\"s\""])
            ])
            let pipeline = ImagePipeline(configuration: .init(dataLoader: loader, isSharedCache: shared, clock: clock))
            let privately = ImageRequest(url: URL(string: "http://test/private.jpg")!, maxPixelSize: 50)
            let maxAges = ImageRequest(url: URL(string: "http://test/s-maxage.jpg")!, maxPixelSize: 50)
            _ = try await pipeline.image(for: privately)
            _ = try await pipeline.image(for: maxAges)
            clock.advance(by: 11)
            let again = try await pipeline.image(for: privately)
            #expect(again.source == (shared ? .network : .memory), "shared: \(shared)")
            let stale = try await pipeline.image(for: maxAges)
            #expect(stale.source == (shared ? .revalidated : .memory), "shared: \(shared)")
            #expect(loader.requests.count == (shared ? 4 : 2), "shared: \(shared)")
        }
    }
}

@Suite("HTTP freshness, shared cache (RFC 9111 §3.5, §5.2.2)")
struct SharedFreshnessTests {
    let requested = Date(timeIntervalSince1970: 1_700_000_000)

    func storage(_ headers: [String: String], shared: Bool, authorization: Bool = false) -> HTTPFreshness.Storage {
        var request = URLRequest(url: URL(string: "http://test/a.jpg")!)
        if authorization { request.setValue("Bearer x", forHTTPHeaderField: "Authorization") }
        return HTTPFreshness.storage(
            for: DataLoadingResponse(statusCode: 200, headers: headers), to: request, requested: requested, received: requested,
            rules: .init(heuristicLifetime: 3600, isShared: shared, requestHasAuthorization: authorization))
    }

    func lifetime(_ storage: HTTPFreshness.Storage) -> TimeInterval? {
        guard case .store(let info) = storage, let expires = info.expires else { return nil }
        return expires.timeIntervalSince(requested)
    }

    @Test("private: stored by a private cache only; s-maxage: a shared cache's lifetime only")
    func directives() {
        #expect(storage(["cache-control": "private, max-age=60"], shared: true) == .none)
        #expect(lifetime(storage(["cache-control": "private, max-age=60"], shared: false)) == 60)
        #expect(lifetime(storage(["cache-control": "max-age=60, s-maxage=5"], shared: true)) == 5)
        #expect(lifetime(storage(["cache-control": "max-age=60, s-maxage=5"], shared: false)) == 60)
    }

    @Test("a response to a request with Authorization is stored by a shared cache only when it says it may")
    func authorization() {
        #expect(storage(["cache-control": "max-age=60"], shared: true, authorization: true) == .none)
        #expect(lifetime(storage(["cache-control": "public, max-age=60"], shared: true, authorization: true)) == 60)
        #expect(lifetime(storage(["cache-control": "s-maxage=30"], shared: true, authorization: true)) == 30)
        #expect(lifetime(storage(["cache-control": "max-age=60"], shared: false, authorization: true)) == 60)
    }
}
