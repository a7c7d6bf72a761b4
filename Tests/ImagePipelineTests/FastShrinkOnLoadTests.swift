import Foundation
import ImageCodec
@testable import ImagePipeline
import Testing
import TestSupport

/// `Configuration.fastShrinkOnLoad` in the pipeline: the size asked for, other pixels, and
/// stored thumbnails never shared with the default's.
@Suite("Pipeline: fast shrink-on-load", .timeLimit(.minutes(2)))
struct FastShrinkOnLoadTests {
    @Test("the same size, other pixels; its stored thumbnails are kept apart from the default's")
    func keptApart() async throws {
        let fixture = try await PipelineFixture.start()
        let disk = try fixture.diskCache()
        // kite.jpg is 480×300: fitted into 100, the fast rule decodes at 2/8, the default at 3/8.
        let request = ImageRequest(url: fixture.url("kite.jpg"), resize: .fit(width: 100, height: 100))
        let quality = fixture.pipeline(disk: disk, storesThumbnails: true)
        let sharp = try await quality.image(for: request).bitmap
        await quality.flushDiskWrites()
        let fast = fixture.pipeline(disk: disk, storesThumbnails: true) { $0.fastShrinkOnLoad = true }
        let soft = try await fast.image(for: request)
        #expect(soft.source == .disk && fast.statistics.thumbnailDiskHits == 0, "the default's stored thumbnail answered the fast pipeline")
        #expect(soft.bitmap.width == sharp.width && soft.bitmap.height == sharp.height)
        #expect(soft.bitmap.pixels != sharp.pixels)
        #expect(fast.thumbnailKey(for: request) != quality.thumbnailKey(for: request))
        #expect(fixture.server.requests("kite.jpg") == 1)
        // Its own thumbnail's write is queued: done before the fixture's directory goes.
        await fast.flushDiskWrites()
    }
}
