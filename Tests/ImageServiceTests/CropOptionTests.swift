import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `g:sm` over sockets: the attention crop, never a silent centre crop.
@Suite("Service: smart gravity", .timeLimit(.minutes(2)))
struct SmartCropOptionTests {
    @Test("g:sm keeps an off-centre product that g:ce cuts off, under its own ETag")
    func keepsTheProduct() async throws {
        let harness = try await ServiceHarness.start()
        // A white sweep, 900×450, an orange checkered product at the right edge.
        var pixels: [UInt8] = []
        for y in 0..<450 {
            for x in 0..<900 {
                let inside = x > 740 && x < 880 && abs(y - 225) < 70
                pixels += !inside ? [246, 246, 244] : (x / 12 + y / 12) % 2 == 0 ? [240, 110, 20] : [120, 40, 10]
            }
        }
        let photo = try Bitmap(width: 900, height: 450, format: .rgb, pixels: pixels)
        harness.origin.serve("/sweep.png", .init(data: try ImageEncoder.png(photo), contentType: "image/png"))
        func orange(_ bitmap: Bitmap) -> Int {
            stride(from: 0, to: bitmap.pixels.count, by: 3).filter { Int(bitmap.pixels[$0]) - Int(bitmap.pixels[$0 + 2]) > 80 }.count
        }
        let smart = try await harness.get(harness.path("rs:fill:200:200/g:sm", harness.source("sweep.png"), ext: "jpg"))
        let centre = try await harness.get(harness.path("rs:fill:200:200/g:ce", harness.source("sweep.png"), ext: "jpg"))
        #expect(smart.status == 200 && centre.status == 200)
        let (kept, cut) = (try ImageDecoder().decode(smart.body), try ImageDecoder().decode(centre.body))
        #expect((kept.width, kept.height) == (200, 200))
        // The product is 140×140 of the 450×450 window: 62×62 of the output.
        #expect(orange(kept) > 3000, "\(orange(kept)) product pixels")
        #expect(orange(cut) == 0)
        #expect(smart.header("ETag") != nil && smart.header("ETag") != centre.header("ETag"))
        await harness.stop()
    }
}
