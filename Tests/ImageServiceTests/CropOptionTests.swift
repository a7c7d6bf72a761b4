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

/// `c:` over sockets: the part kept before the resize, in the output's frame.
@Suite("Service: crop", .timeLimit(.minutes(2)))
struct CropOptionTests {
    /// Red, green and blue thirds across 600×200, as PNG.
    static func bands() throws -> Data {
        var pixels: [UInt8] = []
        for _ in 0..<200 {
            for x in 0..<600 { pixels += [[255, 0, 0], [0, 255, 0], [0, 0, 255]][x / 200] }
        }
        return try ImageEncoder.png(try Bitmap(width: 600, height: 200, format: .rgb, pixels: pixels))
    }

    static func near(_ pixel: ArraySlice<UInt8>, _ colour: [UInt8]) -> Bool {
        zip(pixel, colour).allSatisfy { abs(Int($0) - Int($1)) <= 8 }
    }

    @Test("c: picks the part (pixels, fractions, 0 = whole), its gravity or g:'s, before rs:; keys differ; bad sides are 400")
    func crop() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.serve("/bands.png", .init(data: try Self.bands(), contentType: "image/png"))
        let cases: [(String, width: Int, height: Int, colour: [UInt8])] = [
            ("c:200:0:we", 200, 200, [255, 0, 0]),
            ("c:0.3333:0/g:ea", 200, 200, [0, 0, 255]),
            ("c:200:200", 200, 200, [0, 255, 0]),
            ("c:400:0:we/rs:fill:50:50:0/g:ea", 50, 50, [0, 255, 0]),
            ("c:100:100:so/rot:90", 100, 100, [0, 0, 255])
        ]
        var etags: Set<String> = []
        for (options, width, height, colour) in cases {
            let reply = try await harness.get(harness.path(options, harness.source("bands.png"), ext: "png"))
            #expect(reply.status == 200, "\(options): \(reply.status)")
            guard reply.status == 200 else { continue }
            let image = try ImageDecoder().decode(reply.body)
            #expect((image.width, image.height) == (width, height), "\(options): \(image.width)×\(image.height)")
            #expect(Self.near(image.pixel(x: width / 2, y: height / 2), colour), "\(options): \(Array(image.pixel(x: width / 2, y: height / 2)))")
            etags.insert(reply.header("ETag") ?? "")
        }
        #expect(etags.count == cases.count)
        for bad in ["c:-1:0", "c:abc", "c:1:1:xx", "c:70000:1"] {
            let reply = try await harness.get(harness.path(bad, harness.source("bands.png")))
            #expect(reply.status == 400 && String(decoding: reply.body, as: UTF8.self).contains("c"), "\(bad): \(reply.status)")
        }
        await harness.stop()
    }
}

/// Gravity offsets over sockets, as imgproxy writes them: inward from the named edge, pixels
/// (output pixels for `g:` and `ex:`, scaled by `dpr`; the image's for `c:`) or fractions.
@Suite("Service: gravity offsets", .timeLimit(.minutes(2)))
struct GravityOffsetTests {
    @Test("offsets move c:, g:'s fill crop and ex:'s placement; keys differ; bad offsets are 400")
    func offsets() async throws {
        let harness = try await ServiceHarness.start()
        harness.origin.serve("/bands.png", .init(data: try CropOptionTests.bands(), contentType: "image/png"))
        let (red, green, blue): ([UInt8], [UInt8], [UInt8]) = ([255, 0, 0], [0, 255, 0], [0, 0, 255])
        let cases: [(String, width: Int, height: Int, colour: [UInt8])] = [
            ("c:200:200:we:200", 200, 200, green),
            ("c:200:200:ea:200", 200, 200, green),
            ("c:200:200:ce:-200", 200, 200, red),
            ("c:100:200:we:0.4", 100, 200, green),
            // The fill crops 200 source pixels (scale 0.5): 200 output pixels in is 400 source pixels.
            ("rs:fill:100:100/g:we:200", 100, 100, blue),
            ("rs:fill:100:100/g:we:100", 100, 100, green),
            ("rs:fill:100:100/g:we:100/dpr:2", 200, 200, green),
            // Turned half round the image is blue, green, red: 400 in from its west is red.
            ("c:200:200:we:400/rot:180", 200, 200, red),
            ("c:200:200:we/rot:180", 200, 200, blue)
        ]
        var etags: Set<String> = []
        for (options, width, height, colour) in cases {
            let reply = try await harness.get(harness.path(options, harness.source("bands.png"), ext: "png"))
            #expect(reply.status == 200, "\(options): \(reply.status)")
            guard reply.status == 200 else { continue }
            let image = try ImageDecoder().decode(reply.body)
            #expect((image.width, image.height) == (width, height), "\(options): \(image.width)×\(image.height)")
            guard (image.width, image.height) == (width, height) else { continue }
            for x in [2, width / 2, width - 3] {
                #expect(
                    CropOptionTests.near(image.pixel(x: x, y: height / 2), colour),
                    "\(options) at \(x) of \(width): \(Array(image.pixel(x: x, y: height / 2)))")
            }
            etags.insert(reply.header("ETag") ?? "")
        }
        #expect(etags.count == cases.count)
        // The 100×33 fit, extended to 100×100 against the top and 10 pixels down (with rs: or ex:).
        for options in ["rs:fit:100:100/ex:1:no:0:10/bg:ffffff", "rs:fit:100:100:0:1:no:0:10/bg:ffffff"] {
            let reply = try await harness.get(harness.path(options, harness.source("bands.png"), ext: "png"))
            let tile = try ImageDecoder().decode(reply.body)
            #expect((tile.width, tile.height) == (100, 100), "\(options)")
            guard (tile.width, tile.height) == (100, 100) else { continue }
            #expect(Array(tile.pixel(x: 50, y: 5)) == [255, 255, 255] && Array(tile.pixel(x: 50, y: 50)) == [255, 255, 255], "\(options)")
            #expect(CropOptionTests.near(tile.pixel(x: 50, y: 25), green), "\(options): \(Array(tile.pixel(x: 50, y: 25)))")
        }
        for bad in ["g:we:abc", "g:sm:1", "g:ce:1:2:3", "g:we:70000", "ex:1:sm", "c:10:10:we:nan", "rs:fit:1:1:0:1:xx"] {
            let reply = try await harness.get(harness.path(bad, harness.source("bands.png")))
            #expect(reply.status == 400, "\(bad): \(reply.status)")
        }
        await harness.stop()
    }
}
