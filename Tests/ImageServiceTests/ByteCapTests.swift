import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `mb:` (max_bytes) over sockets: the answer never exceeds its cap, is the plain render when
/// that fits, and is a 422 when nothing fits.
@Suite("Service: max_bytes", .timeLimit(.minutes(2)))
struct ByteCapTests {
    @Test("JPEG under half its bytes: at most the cap, a real image no larger than asked; a cap that fits changes nothing")
    func jpegUnderCap() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try await harness.get(harness.path("w:400", harness.source("kite.jpg")))
        #expect(plain.status == 200)
        let cap = plain.body.count / 2
        let capped = try await harness.get(harness.path("w:400/mb:\(cap)", harness.source("kite.jpg")))
        #expect(capped.status == 200 && capped.body.count <= cap && capped.body.count > cap / 3, "\(capped.body.count) bytes for a cap of \(cap)")
        let image = try ImageDecoder().decode(capped.body)
        #expect(image.width <= 400 && image.width >= 200, "\(image.width)")
        #expect(capped.header("ETag") != plain.header("ETag"))
        let roomy = try await harness.get(harness.path("w:400/mb:\(plain.body.count)", harness.source("kite.jpg")))
        #expect(roomy.body == plain.body, "the render at its quality fits: it is the answer")
        await harness.stop()
    }

    @Test("WebP under its cap by quality, the same size; 422 when even the smallest step does not fit, and for PNG over its cap")
    func webpAndUnreachable() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try await harness.get(harness.path("w:300/f:webp", harness.source("kite.jpg")))
        let cap = plain.body.count * 2 / 3
        let capped = try await harness.get(harness.path("w:300/f:webp/mb:\(cap)", harness.source("kite.jpg")))
        #expect(capped.status == 200 && capped.body.count <= cap)
        #expect(try ImageDecoder().decode(capped.body).width == 300)
        for options in ["w:300/mb:300", "w:300/f:webp/mb:100", "w:300/f:png/mb:1000"] {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 422, "\(options): \(reply.status)")
            #expect(String(decoding: reply.body, as: UTF8.self).contains("smallest output"), "\(options)")
        }
        await harness.stop()
    }
}
