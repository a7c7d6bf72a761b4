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

    /// A photo whose EXIF turns it a quarter clockwise and names an artist, a copyright and a
    /// place (a GPS IFD).
    private static func photoWithEXIF() throws -> (Data, [UInt8]) {
        let block = ExifFixture.block(orientation: 6)
        let photo = try ImageDecoder(options: DecodingOptions(resize: .fill(width: 240, height: 160))).decode(SmallPhotos.data("kite.jpg"))
        let jpeg = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: 95))
        return (ExifFixture.inserting(block, into: jpeg), block)
    }

    /// The output's EXIF block, read as the engine reads a source (nil: none).
    private static func exif(_ body: Data) throws -> [UInt8]? { try ImageSource(data: body).metadata().exif }

    @Test("by default only the Artist and Copyright survive (kcr:1); kcr:0 strips them; sm:0 keeps the whole block, upright")
    func metadataChoices() async throws {
        let harness = try await ServiceHarness.start()
        let (photo, block) = try Self.photoWithEXIF()
        harness.origin.serve("/exif.jpg", ImageServer.Resource(data: photo, contentType: "image/jpeg"))
        let source = harness.source("exif.jpg")

        let plain = try await harness.get(harness.path("w:80", source))
        #expect(plain.status == 200)
        let kept = try #require(try Self.exif(plain.body))
        #expect(Set(try #require(ExifFixture.tags(kept)).keys) == [ExifFixture.artistTag, ExifFixture.copyrightTag])
        #expect(ExifFixture.text(kept, ExifFixture.copyrightTag) == "(c) Example Photo Ltd")
        // The pixels are turned, and nothing tells a viewer to turn them again.
        let header = try ImageDecoder.header(of: plain.body)
        #expect(header.orientation == .up && header.width == 80 && header.height == 120)
        for options in ["w:80/sm:1", "w:80/kcr:1", "w:80/eth:1", "w:80/strip_metadata:true/keep_copyright:true/enforce_thumbnail:0"] {
            let reply = try await harness.get(harness.path(options, source))
            #expect(reply.status == 200 && reply.body == plain.body && reply.header("ETag") == plain.header("ETag"), "\(options)")
        }

        let stripped = try await harness.get(harness.path("w:80/kcr:0", source))
        #expect(stripped.status == 200 && !JPEGSegments.markers(stripped.body).contains(0xE1))
        #expect(stripped.header("ETag") != plain.header("ETag"))
        #expect(try ImageDecoder().decode(stripped.body) == ImageDecoder().decode(plain.body))

        var upright = block
        let orientationValue = try #require((8..<block.count - 1).first { block[$0 - 8] == 0x12 && block[$0 - 7] == 0x01 })
        upright[orientationValue] = 1
        #expect(ExifFixture.orientation(upright) == 1)
        for format in ["jpg", "png", "webp", "avif"] {
            let all = try await harness.get(harness.path("w:80/sm:0/f:\(format)", source))
            #expect(all.status == 200)
            #expect(try Self.exif(all.body) == upright, "\(format): the whole block, GPS included, upright")
            #expect(try ImageDecoder.header(of: all.body).displayWidth == 80, "\(format)")
        }
        let all = try await harness.get(harness.path("w:80/sm:0/kcr:0", source))
        #expect(try Self.exif(all.body) == upright)
        #expect(Set([plain, stripped, all].compactMap { $0.header("ETag") }).count == 3)
        await harness.stop()
    }

    @Test("a source without EXIF gives the same bytes by default as with kcr:0, and none with sm:0")
    func noCopyright() async throws {
        let harness = try await ServiceHarness.start()
        let plain = try await harness.get(harness.path("w:80", harness.source("kite.jpg")))
        let stripped = try await harness.get(harness.path("w:80/kcr:0", harness.source("kite.jpg")))
        #expect(plain.status == 200 && plain.body == stripped.body)
        #expect(!JPEGSegments.markers(plain.body).contains(0xE1))
        let all = try await harness.get(harness.path("w:80/sm:0", harness.source("kite.jpg")))
        #expect(all.status == 200 && !JPEGSegments.markers(all.body).contains(0xE1))
        await harness.stop()
    }

    @Test("a byte cap counts the metadata: the answer fits with its EXIF, in JPEG and WebP")
    func byteCapWithMetadata() async throws {
        let harness = try await ServiceHarness.start()
        let (photo, _) = try Self.photoWithEXIF()
        harness.origin.serve("/exif.jpg", ImageServer.Resource(data: photo, contentType: "image/jpeg"))
        for format in ["jpg", "webp"] {
            let full = try await harness.get(harness.path("w:200/sm:0/f:\(format)", harness.source("exif.jpg")))
            let cap = full.body.count * 6 / 10
            let capped = try await harness.get(harness.path("w:200/sm:0/f:\(format)/mb:\(cap)", harness.source("exif.jpg")))
            #expect(capped.status == 200, "\(format)")
            #expect(capped.body.count <= cap, "\(format): \(capped.body.count) bytes for a cap of \(cap)")
            #expect(try Self.exif(capped.body) != nil, "\(format)")
        }
        // A cap the metadata alone fills is a 422, not an answer without it.
        let tight = try await harness.get(harness.path("w:200/sm:0/mb:150", harness.source("exif.jpg")))
        #expect(tight.status == 422)
        await harness.stop()
    }
}
