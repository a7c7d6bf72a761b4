import Foundation
import ImageCodec
import ImagePipeline
import ImageServer
import Testing
import TestSupport

@Suite("Pipeline: colour management")
struct ColorManagementPipelineTests {
    @Test(
        "a Display P3 image comes out of every strategy in sRGB; preserveSource keeps it as served",
        arguments: [ImagePipeline.CacheStrategy.downsampled, .decoded, .encodedResponse])
    func displayP3(strategy: ImagePipeline.CacheStrategy) async throws {
        let colors: [[UInt8]] = [[230, 40, 60], [255, 128, 0], [40, 160, 60], [30, 80, 200]]
        var pixels: [UInt8] = []
        for y in 0..<256 { for x in 0..<256 { pixels += colors[(y / 128) * 2 + x / 128] } }
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        let png = try ImageEncoder.png(try Bitmap(width: 256, height: 256, format: .rgb, pixels: pixels, iccProfile: profile))
        let expected = try ColorFixtures.transicc(colors, from: "DisplayP3.icc")
        let fixture = try await PipelineFixture.start()
        fixture.server.serve("p3.png", ImageServer.Resource(data: png, contentType: "image/png", cacheControl: "max-age=3600"))
        let request = ImageRequest(url: fixture.url("p3.png"), maxPixelSize: 64)
        // The centre of each square; `.decoded` keeps the full size, the others 64 px.
        let centres = { (bitmap: Bitmap) in
            [(1, 1), (3, 1), (1, 3), (3, 3)].map { Array(bitmap.pixel(x: $0.0 * bitmap.width / 4, y: $0.1 * bitmap.height / 4)) }
        }
        let pipeline = fixture.pipeline(strategy: strategy)
        for (pass, source) in [ImageResponse.Source.network, .memory].enumerated() { // the second time from the memory cache
            let response = try await pipeline.image(for: request)
            let bitmap = response.bitmap
            #expect(response.source == source, "pass \(pass)")
            #expect(bitmap.width == (strategy == .decoded ? 256 : 64) && bitmap.iccProfile == nil)
            for (got, want) in zip(centres(bitmap), expected) {
                #expect(zip(got, want).allSatisfy { abs(Int($0) - Int($1)) <= 2 }, "\(strategy): \(got), transicc \(want)")
            }
        }
        let kept = try await fixture.pipeline(strategy: strategy) { $0.colorManagement = .preserveSource }.image(for: request).bitmap
        #expect(kept.iccProfile == profile && centres(kept) == colors)
    }
}
