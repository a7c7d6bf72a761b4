import CTestImageWriter
import Foundation
import Testing
import TestSupport
@testable import ImageCodec

@Suite("JPEG decoding")
struct JPEGDecodingTests {
    @Test("full-size decode reproduces the encoded pixels", arguments: [false, true])
    func roundTrip(progressive: Bool) throws {
        let source = TestImages.make(width: 96, height: 64, format: .rgb) { x, y in [UInt8(x * 2), UInt8(y * 3), 128] }
        let jpeg = try TestImages.faithfulJPEG(source, progressive: progressive)
        let header = try ImageDecoder.header(of: jpeg)
        #expect(header.format == .jpeg && header.width == 96 && header.height == 64)
        #expect(header.progressive == progressive && header.colorModel == .rgb && !header.hasAlpha && header.bitDepth == 8)
        let decoded = try ImageDecoder().decode(jpeg)
        #expect(decoded.format == .rgb && decoded.width == 96 && decoded.height == 64)
        #expect(TestImages.maxDifference(decoded, source) <= 3)
    }

    @Test("scaled decode hits the exact target size and keeps content in place")
    func scaledDecode() throws {
        let source = TestImages.quadrants(width: 800, height: 600)
        let jpeg = try TestImages.faithfulJPEG(source)
        for (limit, expected) in [(400, (400, 300)), (100, (100, 75)), (333, (333, 250)), (799, (799, 599)), (2000, (800, 600))] {
            let decoded = try ImageDecoder(options: DecodingOptions(maxPixelSize: limit)).decode(jpeg)
            #expect(decoded.width == expected.0 && decoded.height == expected.1, "limit \(limit)")
            let (w, h) = (decoded.width, decoded.height)
            #expect(Array(decoded.pixel(x: w / 4, y: h / 4)).elementsEqual([255, 0, 0], by: { abs(Int($0) - Int($1)) <= 4 }))
            #expect(Array(decoded.pixel(x: 3 * w / 4, y: h / 4)).elementsEqual([0, 255, 0], by: { abs(Int($0) - Int($1)) <= 4 }))
            #expect(Array(decoded.pixel(x: w / 4, y: 3 * h / 4)).elementsEqual([0, 0, 255], by: { abs(Int($0) - Int($1)) <= 4 }))
            #expect(Array(decoded.pixel(x: 3 * w / 4, y: 3 * h / 4)).elementsEqual([255, 255, 255], by: { abs(Int($0) - Int($1)) <= 4 }))
        }
    }

    @Test("DCT-scaled decode matches a full decode resampled with Lanczos")
    func scaledMatchesFullDecodeOnPhoto() throws {
        let jpeg = try TestImages.sample("Kite.jpg")
        let fast = try ImageDecoder(options: DecodingOptions(maxPixelSize: 640)).decode(jpeg)
        let reference = try ImageDecoder().decode(jpeg).resampled(width: fast.width, height: fast.height)
        #expect(fast.width == 640 && fast.height == 400)
        #expect(TestImages.meanDifference(fast, reference) < 2.0)
    }

    @Test("fast shrink-on-load: the smallest DCT scale whose output covers the target, the same output size, close to the default")
    func fastShrinkOnLoad() throws {
        let jpeg = try TestImages.sample("Kite.jpg")
        let header = try ImageDecoder.header(of: jpeg)
        for target in [150, 300, 480, 700, 1000] {
            let quality = ImageDecoder(options: DecodingOptions(maxPixelSize: target))
            let fast = ImageDecoder(options: DecodingOptions(maxPixelSize: target, fastShrinkOnLoad: true))
            let (qualityPlan, fastPlan) = (try quality.plan(jpeg), try fast.plan(jpeg))
            // libjpeg rounds scaled sizes up; the smallest M/8 that still covers the output.
            let expected = try #require(
                (1...8).first { (header.width * $0 + 7) / 8 >= qualityPlan.width && (header.height * $0 + 7) / 8 >= qualityPlan.height })
            #expect(fastPlan.scaleNumerator == expected, "fit \(target)")
            #expect(qualityPlan.scaleNumerator >= fastPlan.scaleNumerator, "fit \(target)")
            #expect(fastPlan.memoryBytes <= qualityPlan.memoryBytes, "fit \(target)")
            let (sharp, quick) = (try quality.decode(jpeg), try fast.decode(jpeg))
            #expect(quick.width == sharp.width && quick.height == sharp.height, "fit \(target)")
            #expect(TestImages.meanDifference(quick, sharp) < 3.0, "fit \(target)")
        }
        // 2048 px into 512: 1/4, where the quality rule keeps 4/8 for Lanczos.
        let wide = try TestImages.faithfulJPEG(
            TestImages.make(width: 2048, height: 1536, format: .rgb) { x, y in
                [UInt8(x % 256), UInt8(y % 256), UInt8((x + y) % 256)]
            })
        #expect(try ImageDecoder(options: DecodingOptions(maxPixelSize: 512, fastShrinkOnLoad: true)).plan(wide).scaleNumerator == 2)
        #expect(try ImageDecoder(options: DecodingOptions(maxPixelSize: 512)).plan(wide).scaleNumerator == 4)
    }

    @Test("DCT-scaled rows sit where they belong when libjpeg rounds the scaled size up")
    func scaledGeometryIsExact() throws {
        // 1001 rows at 3/8 are 375.375, delivered as 376: a row pitch taken from 376/1001
        // instead of 3/8 stretches the image, shifting the bottom rows by 0.35 output rows,
        // which a vertical sine of 16.8 output rows' period turns into ~13 levels.
        let source = TestImages.make(width: 64, height: 1001, format: .gray) { _, y in
            [UInt8(128 + 100 * sin(2 * Double.pi * Double(y) / 80))]
        }
        let jpeg = try TestImages.faithfulJPEG(source)
        let decoder = ImageDecoder(options: DecodingOptions(resize: .fit(width: 0, height: 210)))
        #expect(try decoder.plan(jpeg).scaleNumerator == 3)
        let scaled = try decoder.decode(jpeg)
        let reference = try ImageDecoder().decode(jpeg).resampled(width: scaled.width, height: scaled.height)
        let bottom = TestImages.cropped(scaled, x: 0, y: 190, width: 8, height: 20)
        let expected = TestImages.cropped(reference, x: 0, y: 190, width: 8, height: 20)
        #expect(TestImages.maxDifference(bottom, expected) <= 2)
    }

    @Test("grayscale stays one channel")
    func grayStaysGray() throws {
        let source = TestImages.make(width: 64, height: 48, format: .gray) { x, _ in [UInt8(x * 4)] }
        let jpeg = try TestImages.faithfulJPEG(source)
        #expect(try ImageDecoder.header(of: jpeg).colorModel == .gray)
        let decoded = try ImageDecoder().decode(jpeg)
        #expect(decoded.format == .gray)
        #expect(TestImages.maxDifference(decoded, source) <= 2)
        let sample = try ImageDecoder(options: DecodingOptions(maxPixelSize: 256)).decode(TestImages.sample("Grey.jpg"))
        #expect(sample.format == .gray && sample.width == 256 && sample.height == 160)
    }

    @Test("CMYK and YCCK JPEGs (Adobe-inverted) become RGB", arguments: [false, true])
    func cmyk(asYCCK: Bool) throws {
        // Adobe convention: 255 = no ink. Red = no cyan, full magenta and yellow, no black;
        // cyan = full cyan only; black = full black only.
        let inks: [(cmyk: [UInt8], rgb: [UInt8])] = [
            ([255, 0, 0, 255], [255, 0, 0]), ([0, 255, 255, 255], [0, 255, 255]),
            ([255, 255, 255, 0], [0, 0, 0]), ([255, 255, 255, 255], [255, 255, 255])
        ]
        var samples: [UInt8] = []
        for _ in 0..<16 { for ink in inks { for _ in 0..<16 { samples += ink.cmyk } } }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        #expect(test_jpeg_write_cmyk(64, 16, samples, asYCCK ? 1 : 0, nil, 0, &output, &length) == 0)
        let jpeg = Data(bytes: output!, count: Int(length))
        test_png_free(output)
        #expect(try ImageDecoder.header(of: jpeg).colorModel == .cmyk)
        let decoded = try ImageDecoder().decode(jpeg)
        #expect(decoded.format == .rgb)
        for (index, ink) in inks.enumerated() {
            let pixel = Array(decoded.pixel(x: index * 16 + 8, y: 8))
            #expect(pixel.elementsEqual(ink.rgb, by: { abs(Int($0) - Int($1)) <= 6 }), "ink \(index): \(pixel)")
        }
    }

    @Test("real photos decode to their header size, and downsample to the limit")
    func samplePhotos() throws {
        for name in ["Autumn.jpg", "Path.jpg", "SafeLanding.jpg", "firstgeneration.jpg"] {
            let data = try TestImages.sample(name)
            let header = try ImageDecoder.header(of: data)
            let thumbnail = try ImageDecoder(options: DecodingOptions(maxPixelSize: 500)).decode(data)
            #expect(max(thumbnail.width, thumbnail.height) == 500, "\(name)")
            let expectedShort = Int((Double(min(header.width, header.height)) * 500 / Double(max(header.width, header.height))).rounded())
            #expect(min(thumbnail.width, thumbnail.height) == expectedShort, "\(name)")
        }
    }

    @Test("with preserveSource, ICC profiles are read from APP2 (across chunks) and carried into encoded JPEG and PNG")
    func iccProfileCarriedOver() throws {
        let preserve = ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource))
        // A profile too big for one APP2 chunk (65,519 bytes): Display P3 followed by 70,000
        // bytes no tag refers to, its header's size field counting them, so it stays a valid
        // RGB profile (.preserveSource drops one that does not describe the pixels).
        let displayP3 = try ColorFixtures.profile("DisplayP3.icc")
        var large = displayP3 + (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        withUnsafeBytes(of: UInt32(large.count).bigEndian) { large.replaceSubrange(0..<4, with: $0) }
        for profile in [large, displayP3] {
            var source = TestImages.quadrants(width: 32, height: 32)
            source.iccProfile = profile
            let fromJPEG = try preserve.decode(ImageEncoder.jpeg(source))
            #expect(fromJPEG.iccProfile?.count == profile.count && fromJPEG.iccProfile == profile)
            let withoutProfile = try ImageEncoder.jpeg(source, options: JPEGEncodingOptions(preservesICCProfile: false))
            #expect(try preserve.decode(withoutProfile).iccProfile == nil)
        }
        // PNG: libpng checks the profile, so a real one: JPEG → bitmap → PNG → bitmap keeps it.
        var source = TestImages.quadrants(width: 32, height: 32)
        source.iccProfile = try ColorFixtures.profile("DisplayP3.icc")
        let viaJPEG = try preserve.decode(ImageEncoder.jpeg(source))
        let fromPNG = try preserve.decode(ImageEncoder.png(viaJPEG))
        #expect(fromPNG.iccProfile == source.iccProfile && fromPNG.pixels == viaJPEG.pixels)
        #expect(try preserve.decode(ImageEncoder.png(viaJPEG, options: PNGEncodingOptions(preservesICCProfile: false))).iccProfile == nil)
    }
}
