import Foundation
import Testing
import TestSupport
@testable import ImageCodec

@Suite("WebP encoding")
struct WebPEncodingTests {
    @Test("a photo round-trips: a WebP file dwebp reads, the same size, close pixels; lower quality, fewer bytes")
    func roundTrip() throws {
        let kite = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        let data = try ImageEncoder.webp(kite)
        #expect(try ImageFormat.sniff(data) == .webp)
        let decoded = try ImageDecoder().decode(data)
        #expect(decoded.format == .rgb && (decoded.width, decoded.height) == (kite.width, kite.height))
        #expect(TestImages.meanDifference(decoded, kite) < 4)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("roundtrip-\(UUID().uuidString).webp")
        defer { try? FileManager.default.removeItem(at: file) }
        try data.write(to: file)
        let reference = try WebPFixtures.dwebp(file)
        #expect((reference.width, reference.height) == (kite.width, kite.height))
        let low = try ImageEncoder.webp(kite, options: WebPEncodingOptions(quality: 30))
        let high = try ImageEncoder.webp(kite, options: WebPEncodingOptions(quality: 95))
        #expect(low.count < data.count && data.count < high.count)
    }

    @Test("alpha is kept exactly; gray becomes RGB")
    func alphaAndGray() throws {
        let calla = try ImageDecoder().decode(try WebPFixtures.data("calla-alpha.png"))
        let decoded = try ImageDecoder().decode(try ImageEncoder.webp(calla))
        #expect(decoded.format == .rgba)
        let alpha = { (bitmap: Bitmap) in stride(from: 3, to: bitmap.pixels.count, by: 4).map { bitmap.pixels[$0] } }
        let same = alpha(decoded) == alpha(calla)
        #expect(same && Set(alpha(calla)).count > 200, "the alpha plane changed")
        let grey = try ImageDecoder().decode(try SmallPhotos.data("grey.jpg"))
        #expect(grey.format == .gray)
        let colour = try ImageDecoder().decode(try ImageEncoder.webp(grey))
        #expect(try colour.format == .rgb && TestImages.meanDifference(colour.grayscaled(), grey) < 3)
    }

    @Test("a kept ICC profile is written in an ICCP chunk that both decoders read back")
    func iccProfile() throws {
        var kite = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        kite.iccProfile = profile
        let data = try ImageEncoder.webp(kite)
        let kept = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(data)
        #expect(kept.iccProfile == profile)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("icc-\(UUID().uuidString).webp")
        defer { try? FileManager.default.removeItem(at: file) }
        try data.write(to: file)
        #expect(try WebPFixtures.dwebp(file).width == kite.width)
        let without = try ImageEncoder.webp(kite, options: WebPEncodingOptions(preservesICCProfile: false))
        #expect(try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(without).iccProfile == nil)
    }

    @Test("sharp YUV is applied: saturated colour edges come back closer than with the plain conversion")
    func sharpYUV() throws {
        // Red, green and blue stripes 3 px wide: 4:2:0 chroma averages across every edge, and
        // the plain conversion then shifts the luma there too; sharp YUV corrects the luma.
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
        let pixels = (0..<96 * 96).flatMap { colours[($0 % 96) / 3 % colours.count] }
        let stripes = try Bitmap(width: 96, height: 96, format: .rgb, pixels: pixels)
        let plain = try ImageEncoder.webp(stripes, options: WebPEncodingOptions(quality: 90, sharpYUV: false))
        let sharp = try ImageEncoder.webp(stripes, options: WebPEncodingOptions(quality: 90, sharpYUV: true))
        let plainError = TestImages.meanDifference(try ImageDecoder().decode(plain), stripes)
        let sharpError = TestImages.meanDifference(try ImageDecoder().decode(sharp), stripes)
        #expect(sharpError < plainError * 0.9, "sharp YUV: mean error \(sharpError), plain: \(plainError)")
    }

    @Test("settings out of range are invalid arguments")
    func invalidSettings() throws {
        let bitmap = try Bitmap(width: 2, height: 2, format: .rgb, pixels: [UInt8](repeating: 0, count: 12))
        #expect(throws: ImageCodecError.invalidArgument("WebP quality must be 1...100, got 0")) {
            try ImageEncoder.webp(bitmap, options: WebPEncodingOptions(quality: 0))
        }
        #expect(throws: ImageCodecError.invalidArgument("WebP method must be 0...6, got 7")) {
            try ImageEncoder.webp(bitmap, options: WebPEncodingOptions(method: 7))
        }
    }
}

@Suite("AVIF encoding")
struct AVIFEncodingTests {
    @Test("a photo round-trips: an AVIF both libheif's tool and the engine read, the same size, close pixels; lower quality, fewer bytes")
    func roundTrip() throws {
        let kite = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        let data = try ImageEncoder.avif(kite)
        #expect(try ImageFormat.sniff(data) == .avif && ImageDecoder.header(of: data).format == .avif)
        let decoded = try ImageDecoder().decode(data)
        #expect(decoded.format == .rgb && (decoded.width, decoded.height) == (kite.width, kite.height))
        #expect(TestImages.meanDifference(decoded, kite) < 5)
        let low = try ImageEncoder.avif(kite, options: AVIFEncodingOptions(quality: 30))
        let high = try ImageEncoder.avif(kite, options: AVIFEncodingOptions(quality: 90))
        #expect(low.count < data.count && data.count < high.count)
    }

    @Test("alpha is kept; gray becomes RGB; a kept ICC profile reads back")
    func alphaGrayAndProfile() throws {
        let calla = try ImageDecoder().decode(try WebPFixtures.data("calla-alpha.png"))
        let decoded = try ImageDecoder().decode(try ImageEncoder.avif(calla, options: AVIFEncodingOptions(quality: 90)))
        #expect(decoded.format == .rgba && TestImages.meanDifference(decoded, calla) < 6)
        let grey = try ImageDecoder().decode(try SmallPhotos.data("grey.jpg"))
        #expect(try ImageDecoder().decode(try ImageEncoder.avif(grey)).format == .rgb)
        var kite = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        kite.iccProfile = try ColorFixtures.profile("DisplayP3.icc")
        let tagged = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(try ImageEncoder.avif(kite))
        #expect(tagged.iccProfile == kite.iccProfile)
    }

    @Test("settings out of range are invalid arguments; HEIC is not written")
    func invalidSettings() throws {
        let bitmap = try Bitmap(width: 2, height: 2, format: .rgb, pixels: [UInt8](repeating: 0, count: 12))
        #expect(throws: ImageCodecError.invalidArgument("AVIF quality must be 1...100, got 0")) {
            try ImageEncoder.avif(bitmap, options: AVIFEncodingOptions(quality: 0))
        }
        #expect(throws: ImageCodecError.invalidArgument("AVIF speed must be 0...9, got 10")) {
            try ImageEncoder.avif(bitmap, options: AVIFEncodingOptions(speed: 10))
        }
        #expect(ImageFormat.avif.isWritable && !ImageFormat.heic.isWritable)
    }
}
