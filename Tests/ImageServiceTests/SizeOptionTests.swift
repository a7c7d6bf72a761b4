import Foundation
import ImageCodec
import Testing
import TestSupport

@testable import ImageService

/// `mw:`, `mh:` and `z:` over sockets, on red, green and blue thirds across 600×200: exact
/// sizes, and which third the crop kept.
@Suite("Service: minimum sizes and zoom", .timeLimit(.minutes(2)))
struct SizeOptionTests {
    @Test("mw:/mh: scale the source up to them, then crop to the box; z: multiplies the box, per axis for fit and force")
    func sizes() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.serve("/bands.png", .init(data: try CropOptionTests.bands(), contentType: "image/png"))
        let green: [UInt8] = [0, 255, 0]
        let cases: [(String, width: Int, height: Int, centre: [UInt8]?)] = [
            // The fit would be 300×100; 900 wide, cropped to the box, is the middle 200×200.
            ("rs:fit:300:300/mw:900", 300, 300, green),
            ("mw:900", 900, 300, nil),
            ("rs:fit:300:300/mh:300", 300, 300, green),
            // Already wider than the minimum: nothing changes.
            ("mh:100", 600, 200, nil),
            ("rs:fill:100:100/mw:1200", 100, 100, green),
            ("rs:fit:100:100/mw:300/dpr:2", 200, 200, green),
            ("rs:fit:300:300/mw:900/g:we", 300, 300, [255, 0, 0]),
            ("rs:fit:100:100/z:2", 200, 67, nil),
            ("rs:fill:100:100/z:1.5", 150, 150, green),
            ("rs:force:100:100/z:2:1", 200, 100, nil),
            // The fit's scale is 0.5; zoomed 2 across, 1 down.
            ("rs:fit:300:300/z:2:1", 600, 100, nil),
            ("rs:fit:300:300/z:1:2", 300, 200, nil)
        ]
        var etags: Set<String> = []
        for (options, width, height, centre) in cases {
            let reply = try await harness.get(harness.path(options, harness.source("bands.png"), ext: "png"))
            #expect(reply.status == 200, "\(options): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            guard reply.status == 200 else { continue }
            let image = try ImageDecoder().decode(reply.body)
            #expect((image.width, image.height) == (width, height), "\(options): \(image.width)×\(image.height)")
            if let centre, (image.width, image.height) == (width, height) {
                // The whole width is one third: the crop kept that third alone.
                for x in [2, width / 2, width - 3] {
                    #expect(
                        CropOptionTests.near(image.pixel(x: x, y: height / 2), centre),
                        "\(options) at \(x): \(Array(image.pixel(x: x, y: height / 2)))")
                }
            }
            etags.insert(reply.header("ETag") ?? "")
        }
        #expect(etags.count == cases.count)
        for bad in ["z:0", "z:-1", "z:101", "z:abc", "z:", "z:1:2:3", "mw:-1", "mw:70000", "mh:x", "rs:fill:100:100/z:2:1", "z:2:1/mw:10"] {
            let reply = try await harness.get(harness.path(bad, harness.source("bands.png")))
            #expect(reply.status == 400, "\(bad): \(reply.status)")
        }
        await harness.stop()
    }
}

/// `skp:` over sockets: a listed source format is answered byte for byte, anything else is
/// processed as usual.
@Suite("Service: skip processing", .timeLimit(.minutes(2)))
struct SkipProcessingTests {
    @Test("skp: answers a listed format's own bytes, under an ETag of their own, unless the URL names another format")
    func skip() async throws {
        let harness = try await ServiceHarness.start()
        let photo = try SmallPhotos.data("kite.jpg")
        let bands = try CropOptionTests.bands()
        harness.origin.serve("/kite.jpg", .init(data: photo, contentType: "image/jpeg"))
        harness.origin.serve("/bands.png", .init(data: bands, contentType: "image/png"))

        let skipped = try await harness.get(harness.path("rs:fit:100:100/skp:png:jpg", harness.source("kite.jpg")))
        #expect(skipped.status == 200 && skipped.body == photo && skipped.header("Content-Type") == "image/jpeg")
        let etag = try #require(skipped.header("ETag"))
        let again = try await harness.get(harness.path("rs:fit:100:100/skp:png:jpg", harness.source("kite.jpg")), headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        // Processed: a format not listed, another output format named, no skp at all.
        for (options, source, ext) in [
            ("rs:fit:100:100/skp:webp:gif", "kite.jpg", nil), ("rs:fit:100:100/skp:jpeg", "kite.jpg", "png"),
            ("rs:fit:100:100/skp:jpg", "bands.png", nil), ("rs:fit:100:100", "kite.jpg", nil)
        ] as [(String, String, String?)] {
            let reply = try await harness.get(harness.path(options, harness.source(source), ext: ext))
            #expect(reply.status == 200, "\(options) \(source): \(reply.status)")
            let header = try ImageDecoder.header(of: reply.body)
            #expect(max(header.width, header.height) == 100, "\(options) \(source): \(header.width)×\(header.height)")
            #expect(reply.header("ETag") != etag)
        }
        // The PNG listed too: its own bytes.
        let png = try await harness.get(harness.path("rs:fit:100:100/skp:jpg:png", harness.source("bands.png")))
        #expect(png.body == bands && png.header("Content-Type") == "image/png")
        for bad in ["skp:xyz", "skp:jpg:tga"] {
            let reply = try await harness.get(harness.path(bad, harness.source("kite.jpg")))
            #expect(reply.status == 400 && String(decoding: reply.body, as: UTF8.self).contains("skp"), "\(bad): \(reply.status)")
        }
        await harness.stop()
    }
}
