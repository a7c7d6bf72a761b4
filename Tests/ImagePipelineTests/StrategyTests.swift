import Foundation
import ImageCache
import ImageCodec
import ImagePipeline
import ImageServer
import Testing
import TestSupport

@Suite("Pipeline: cache strategies")
struct StrategyTests {
    @Test("downsampled: bitmaps at the requested size, one memory entry per size, hits decode nothing")
    func downsampled() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline(strategy: .downsampled)
        let url = fixture.url("kite.jpg")
        for size in [64, 128] { _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: size)) }
        let small = try #require(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 64))?.bitmap)
        #expect(small == (try PipelineFixture.expected("kite.jpg", maxPixelSize: 64)))
        #expect(try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 128)).source == .memory)
        let statistics = pipeline.statistics
        #expect(statistics.decodes == 2 && statistics.memoryCount == 2)
        #expect(statistics.memoryCost == small.byteCount + (try PipelineFixture.expected("kite.jpg", maxPixelSize: 128)).byteCount)
    }

    @Test("resizes are cache keys: fit, fill and fill with another gravity share one download, each its own decode and entry")
    func resizes() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(strategy: .downsampled, disk: disk, storesThumbnails: true)
        let url = fixture.url("kite.jpg")
        let resizes: [Resize] = [.fit(width: 120, height: 120), .fill(width: 120, height: 120), .fill(width: 120, height: 120, gravity: .east)]
        var bitmaps: [Bitmap] = []
        for resize in resizes {
            let bitmap = try await pipeline.image(for: ImageRequest(url: url, resize: resize)).bitmap
            let expected = try ImageDecoder(options: DecodingOptions(resize: resize)).decode(try #require(PipelineFixture.photos["kite.jpg"]))
            #expect(bitmap == expected, "\(resize)")
            bitmaps.append(bitmap)
        }
        #expect(bitmaps.map(\.width) == [120, 120, 120] && bitmaps.map(\.height) == [75, 120, 120])
        #expect(bitmaps[1] != bitmaps[2], "gravity is part of the key")
        #expect(fixture.server.requests("kite.jpg") == 1)
        let statistics = pipeline.statistics
        #expect(statistics.decodes == 3 && statistics.memoryCount == 3)
        // maxPixelSize is the fit shorthand: the same entry.
        #expect(try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 120)).source == .memory)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, resize: .fill(width: 120, height: 120, gravity: .west))) == nil)
        // One original and a stored thumbnail per resize.
        await pipeline.flushDiskWrites()
        #expect(disk.statistics.count == 4)
    }

    @Test("decoded: one full-size bitmap serves every size")
    func decoded() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline(strategy: .decoded)
        let url = fixture.url("kite.jpg")
        let first = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 64))
        let full = try PipelineFixture.expected("kite.jpg", maxPixelSize: nil)
        #expect(first.bitmap == full)
        #expect(try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 200)).source == .memory)
        #expect(pipeline.statistics.decodes == 1 && pipeline.statistics.memoryCost == full.byteCount)
    }

    @Test("encodedResponse: memory holds the bytes and every hit decodes them, on the caller's thread for cachedImage")
    func encodedResponse() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline(strategy: .encodedResponse)
        let request = ImageRequest(url: fixture.url("ladybird.jpg"), maxPixelSize: 100)
        _ = try await pipeline.image(for: request)
        #expect(pipeline.statistics.memoryCost == PipelineFixture.photos["ladybird.jpg"]?.count)
        let expected = try PipelineFixture.expected("ladybird.jpg", maxPixelSize: 100)
        #expect(pipeline.cachedImage(for: request)?.bitmap == expected)
        #expect(pipeline.cachedImage(for: request)?.bitmap == expected)
        let async = try await pipeline.image(for: request)
        #expect(async.source == .memory && async.bitmap == expected)
        #expect(pipeline.statistics.decodes == 4 && fixture.server.statistics.requests == 1)
    }

    @Test("cachedImage serves fresh hits only under policies that allow the cache")
    func cachedImagePolicies() async throws {
        let fixture = try await PipelineFixture.start()
        let pipeline = fixture.pipeline()
        let url = fixture.url("grey.jpg")
        _ = try await pipeline.image(for: ImageRequest(url: url, maxPixelSize: 80))
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 80)) != nil)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 81)) == nil)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 80, cachePolicy: .reloadIgnoringCache)) == nil)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 80, cachePolicy: .revalidate)) == nil)
        #expect(pipeline.cachedImage(for: ImageRequest(url: url, maxPixelSize: 80, cachePolicy: .returnCacheDataDontLoad)) != nil)
        // A cache key shared by two URLs.
        let aliased = ImageRequest(url: fixture.url("grey.jpg?token=2"), maxPixelSize: 80, cacheKey: url.absoluteString)
        #expect(pipeline.cachedImage(for: aliased) != nil)
    }

    @Test("storesThumbnails: a cold pipeline decodes the stored thumbnail, not the original, and sends no request")
    func storedThumbnails() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        let request = ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 120)
        let warmPipeline = fixture.pipeline(disk: disk, storesThumbnails: true)
        let warm = try await warmPipeline.image(for: request)
        await warmPipeline.flushDiskWrites()
        #expect(disk.statistics.count == 2, "the original and its thumbnail")
        let cold = fixture.pipeline(disk: disk, storesThumbnails: true)
        let response = try await cold.image(for: request)
        #expect(response.source == .disk && cold.statistics.thumbnailDiskHits == 1 && cold.statistics.diskHits == 0)
        #expect(fixture.server.statistics.requests == 1)
        #expect(response.bitmap.width == warm.bitmap.width && response.bitmap.height == warm.bitmap.height)
        // A JPEG of the thumbnail at q90: close to it, not identical.
        let difference = zip(response.bitmap.pixels, warm.bitmap.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        #expect(Double(difference) / Double(warm.bitmap.pixels.count) < 3)
        // A PNG source with alpha keeps its alpha through a PNG thumbnail.
        let png = ImageRequest(url: fixture.url("calla.png"), maxPixelSize: 100)
        _ = try await cold.image(for: png)
        await cold.flushDiskWrites()
        let coldAgain = fixture.pipeline(disk: disk, storesThumbnails: true)
        let pngResponse = try await coldAgain.image(for: png)
        #expect(pngResponse.source == .disk && pngResponse.bitmap.format == .rgba)
        #expect(pngResponse.bitmap == (try PipelineFixture.expected("calla.png", maxPixelSize: 100)))
    }

    @Test("the memory limit holds: full-size bitmaps over a quarter of it are not kept")
    func memoryLimit() async throws {
        let fixture = try await PipelineFixture.start()
        let full = try PipelineFixture.expected("kite.jpg", maxPixelSize: nil)
        let pipeline = fixture.pipeline(strategy: .decoded) { $0.memoryCacheLimit = full.byteCount * 3 }
        for path in ["kite.jpg", "ladybird.jpg", "grey.jpg"] {
            _ = try await pipeline.image(for: ImageRequest(url: fixture.url(path)))
            #expect(pipeline.statistics.memoryCost <= full.byteCount * 3)
        }
        // The RGB photos are over a quarter of the limit; the gray one (a third of the bytes) is not.
        #expect(pipeline.statistics.memoryCount == 1)
        #expect(pipeline.cachedImage(for: ImageRequest(url: fixture.url("grey.jpg"))) != nil)
        #expect(try await pipeline.image(for: ImageRequest(url: fixture.url("kite.jpg"))).source == .network)
    }
}
