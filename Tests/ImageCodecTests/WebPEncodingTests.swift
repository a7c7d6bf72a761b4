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
        #expect(colour.format == .rgb && TestImages.meanDifference(colour.grayscaled(), grey) < 3)
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
