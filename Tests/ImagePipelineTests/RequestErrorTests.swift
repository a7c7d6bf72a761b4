import Foundation
import ImageCache
import ImageCodec
@testable import ImagePipeline
import ImageServer
import Testing
import TestSupport

/// N2: an error that belongs to the request (its resize) never costs the cached original, and
/// one the request alone decides costs no I/O at all.
@Suite("Pipeline: request errors", .timeLimit(.minutes(2)))
struct RequestErrorTests {
    /// A pipeline whose disk holds kite.jpg's original, and a fresh pipeline on that disk.
    static func warmDisk(_ fixture: PipelineFixture, limits: DecodingLimits = DecodingLimits()) async throws -> (ImagePipeline, DiskCache) {
        let disk = try fixture.diskCache()
        let warm = fixture.pipeline(disk: disk)
        _ = try await warm.image(for: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 64))
        await warm.flushDiskWrites()
        return (fixture.pipeline(disk: disk) { $0.decodingLimits = limits }, disk)
    }

    @Test(
        "a resize no image could satisfy is a typed error before any I/O, and the original stays on disk",
        arguments: [
            Resize.fill(width: 0, height: 100), .fit(width: 0, height: 0), .fill(width: 100, height: 100, gravity: .focus(x: 1.5, y: 0.5)),
            .fit(width: -1, height: 10)
        ])
    func invalidResize(_ resize: Resize) async throws {
        let fixture = try await PipelineFixture.start()
        let (pipeline, disk) = try await Self.warmDisk(fixture)
        let key = fixture.url("kite.jpg").absoluteString
        let requestsBefore = fixture.server.statistics.requests
        let diskReads = disk.statistics.counters
        let request = ImageRequest(url: fixture.url("kite.jpg"), resize: resize)
        await #expect {
            try await pipeline.image(for: request)
        } throws: { error in
            guard case ImagePipelineError.invalidRequest(.invalidArgument) = error else { return false }
            return true
        }
        let task = pipeline.imageTask(with: request)
        await #expect(throws: ImagePipelineError.self) { try await task.response }
        #expect(fixture.server.statistics.requests == requestsBefore, "no download for a request that cannot be met")
        #expect(disk.statistics.counters == diskReads, "no disk read either")
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: key) == PipelineFixture.photos["kite.jpg"])
        #expect(pipeline.statistics.decodes == 0)
    }

    @Test("an enlarge over the pixel limit (known only from the header) fails the request, not the original")
    func enlargeOverTheLimit() async throws {
        let fixture = try await PipelineFixture.start()
        let (pipeline, disk) = try await Self.warmDisk(fixture, limits: DecodingLimits(maxPixelCount: 1_000_000))
        let key = fixture.url("kite.jpg").absoluteString
        // kite.jpg is 480×300; enlarged to fit 2000×2000 it would be 2000×1250, over 1 MP.
        let request = ImageRequest(url: fixture.url("kite.jpg"), resize: .fit(width: 2000, height: 2000, enlarge: true))
        await #expect {
            try await pipeline.image(for: request)
        } throws: { error in
            guard case ImagePipelineError.invalidRequest(.tooLarge) = error else { return false }
            return true
        }
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: key) == PipelineFixture.photos["kite.jpg"])
        // The original still serves every other request, from disk.
        #expect(try await pipeline.image(for: ImageRequest(url: fixture.url("kite.jpg"), maxPixelSize: 100)).source == .disk)
        #expect(fixture.server.requests("kite.jpg") == 1)
    }

    @Test("bytes that do not decode are still dropped: that error is theirs")
    func corruptBytesAreDropped() async throws {
        let fixture = try await PipelineFixture.start()
        var broken = try #require(PipelineFixture.photos["kite.jpg"])
        broken = broken.prefix(600) + Data(repeating: 0xFF, count: broken.count - 600)
        fixture.server.serve("broken.jpg", ImageServer.Resource(data: broken))
        let disk = try fixture.diskCache()
        let pipeline = fixture.pipeline(disk: disk)
        await #expect(throws: ImagePipelineError.self) {
            try await pipeline.image(for: ImageRequest(url: fixture.url("broken.jpg"), maxPixelSize: 64))
        }
        await pipeline.flushDiskWrites()
        #expect(try disk.value(forKey: fixture.url("broken.jpg").absoluteString) == nil)
    }
}
