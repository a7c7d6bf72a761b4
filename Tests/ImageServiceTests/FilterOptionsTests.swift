import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `bl`, `sh` and `pix` over sockets: the answer is the plain render filtered.
@Suite("Service: blur, sharpen, pixelate", .timeLimit(.minutes(2)))
struct FilterOptionsTests {
    @Test("each filter's answer equals the plain PNG render filtered by the library; the filters come before the padding")
    func filtersOverSockets() async throws {
        let harness = try await ServiceHarness.start()
        func image(_ options: String) async throws -> Bitmap { try await harness.image(options + "/f:png") }
        let plain = try await image("w:160")
        #expect(try await image("w:160/bl:3") == (try plain.blurred(sigma: 3)))
        #expect(try await image("w:160/sh:1") == (try plain.sharpened(sigma: 1)))
        #expect(try await image("w:160/pix:9") == (try plain.pixelated(size: 9)))
        #expect(try await image("w:160/bl:3") != plain)
        let padded = try await image("w:160/pix:9/pd:4/bg:000000")
        #expect(padded.width == 168 && Array(padded.pixel(x: 0, y: 0)) == [0, 0, 0], "the padding is not pixelated")
        let reply = try await harness.get(harness.path("w:160/bl:1000", harness.source("kite.jpg")))
        #expect(reply.status == 400)
        await harness.stop()
    }
}
