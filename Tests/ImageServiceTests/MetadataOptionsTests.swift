import Foundation
import ImageCodec
import ImageServer
import Testing
import TestSupport

@testable import ImageService

/// `scp`, `sm`, `kcr` and `eth`: the colour profile kept or converted, and the metadata choices
/// the service cannot make said so, not ignored.
@Suite("Service: colour profile and metadata options", .timeLimit(.minutes(2)))
struct MetadataOptionsTests {
    @Test("a Display P3 source: sRGB without a profile by default, its own profile with scp:0")
    func colourProfile() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.serve("/p3.webp", ImageServer.Resource(data: try WebPFixtures.data("kite-p3.webp"), contentType: "image/webp"))
        func image(_ options: String) async throws -> Bitmap { try await harness.image(options, "p3.webp", colorManagement: .preserveSource) }
        let source = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(WebPFixtures.data("kite-p3.webp"))
        let sourceProfile = try #require(source.iccProfile)
        #expect(try await image("w:100/f:png").iccProfile == nil)
        #expect(try await image("w:100/f:png/scp:1").iccProfile == nil)
        #expect(try await image("w:100/f:png/scp:0").iccProfile == sourceProfile)
        #expect(try await image("w:100/scp:0").iccProfile == sourceProfile, "JPEG keeps it too")
        await harness.stop()
    }

    @Test("sm:1, kcr:0 and eth are accepted and change nothing; sm:0 and kcr:1 are 400s naming what is not supported")
    func metadataChoices() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try await harness.get(harness.path("w:80", harness.source("kite.jpg")))
        for options in ["w:80/sm:1", "w:80/kcr:0", "w:80/eth:1", "w:80/strip_metadata:true/keep_copyright:false/enforce_thumbnail:0"] {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 200 && reply.body == plain.body && reply.header("ETag") == plain.header("ETag"), "\(options)")
        }
        for (options, named) in [("w:80/sm:0", "metadata"), ("w:80/kcr:1", "copyright")] {
            let reply = try await harness.get(harness.path(options, harness.source("kite.jpg")))
            #expect(reply.status == 400 && String(decoding: reply.body, as: UTF8.self).contains(named), "\(options)")
        }
        await harness.stop()
    }
}
