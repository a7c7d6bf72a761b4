import Foundation
import ImageCodec
import ImagePipeline
import ImageServer
import Testing
import TestSupport

/// An animated GIF through the pipeline: a cell gets its first frame; a view that plays asks
/// for the frames, loaded once through the same caches.
@Suite("Pipeline: animations")
struct AnimationPipelineTests {
    @Test("image(for:) is the first frame; animation(for:) every frame at the request's size, from one download")
    func firstFrameAndAnimation() async throws {
        let fixture = try await PipelineFixture.start()
        let gif = try GIFFixtures.data("pan.gif")
        fixture.server.serve("pan.gif", ImageServer.Resource(data: gif, contentType: "image/gif"))
        // The encoded response is what the memory cache keeps: the frames reuse its bytes.
        let pipeline = fixture.pipeline(strategy: .encodedResponse)
        let request = ImageRequest(url: fixture.url("pan.gif"), maxPixelSize: 56)
        let cell = try await pipeline.image(for: request)
        let first = try ImageDecoder(options: DecodingOptions(maxPixelSize: 56)).decode(gif)
        #expect(cell.bitmap == first)
        var frames = try await pipeline.animation(for: request)
        #expect(frames.frameCount == 12 && frames.plays == 0)
        var count = 0
        while let frame = try frames.next() {
            #expect(frame.bitmap.width == 56 && frame.bitmap.height == 40 && frame.durationMilliseconds == 80)
            count += 1
        }
        #expect(count == 12)
        #expect(fixture.server.requests("pan.gif") == 1, "the frames come from the cached bytes")
        await #expect(throws: ImagePipelineError.self) { try await pipeline.animation(for: request, maxFrames: 0) }
    }
}
