import Foundation
import Testing
import TestSupport
@testable import ImageCodec

@Suite("Encoding")
struct EncodingTests {
    @Test("JPEG output has no EXIF even when the source had it; orientation is in the pixels")
    func noExifInOutput() throws {
        let source = TestImages.withOrientation(try TestImages.faithfulJPEG(TestImages.quadrants(width: 64, height: 32)), 6)
        #expect(JPEGSegments.markers(source).contains(0xE1))
        let output = try ImageEncoder.jpeg(try ImageDecoder().decode(source))
        #expect(!JPEGSegments.markers(output).contains(0xE1))
        let header = try ImageDecoder.header(of: output)
        #expect(header.orientation == .up && header.width == 32 && header.height == 64)
    }

    @Test("quality, subsampling and progressive options take effect")
    func jpegOptions() throws {
        let photo = try ImageDecoder(options: DecodingOptions(maxPixelSize: 400)).decode(TestImages.sample("Path.jpg"))
        let low = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: 30))
        let high = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: 95))
        #expect(low.count < high.count)
        // libjpeg-turbo's encoder only: the perceptual one always optimises its tables.
        let unoptimized = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(optimizesHuffmanCoding: false, encoder: .libjpegTurbo))
        #expect(try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(encoder: .libjpegTurbo)).count < unoptimized.count)
        let progressive = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(progressive: true))
        #expect(try ImageDecoder.header(of: progressive).progressive)
        #expect(JPEGSegments.markers(progressive).contains(0xC2))
        // 4:2:0 → luma sampling factors 2x2 in SOF0 (byte after component id).
        let sof = [UInt8](try ImageEncoder.jpeg(photo))
        let start = try #require((2..<sof.count - 1).first { sof[$0] == 0xFF && sof[$0 + 1] == 0xC0 })
        #expect(sof[start + 11] == 0x22)
        let full = [UInt8](try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(chromaSubsampling: .s444)))
        let fullStart = try #require((2..<full.count - 1).first { full[$0] == 0xFF && full[$0 + 1] == 0xC0 })
        #expect(full[fullStart + 11] == 0x11)
    }

    /// The documented table, 13.5·(1 + 0.2·√(u² + v²))^1.2 rounded, written out by hand (from
    /// a separate Python evaluation), so a slip in the encoder's formula shows here.
    static let ssimTunedAtQuality50 = [
        14, 17, 20, 24, 27, 31, 35, 39,
        17, 18, 21, 24, 28, 31, 35, 39,
        20, 21, 23, 26, 29, 32, 36, 40,
        24, 24, 26, 28, 31, 34, 37, 41,
        27, 28, 29, 31, 33, 36, 39, 43,
        31, 31, 32, 34, 36, 39, 42, 45,
        35, 35, 36, 37, 39, 42, 44, 47,
        39, 39, 40, 41, 43, 45, 47, 50
    ]

    /// libjpeg's standard luma table (ITU-T T.81 Annex K, table K.1), natural order.
    static let annexKLuma = [
        16, 11, 10, 16, 24, 40, 51, 61,
        12, 12, 14, 19, 26, 58, 60, 55,
        14, 13, 16, 24, 40, 57, 69, 56,
        14, 17, 22, 29, 51, 87, 80, 62,
        18, 22, 37, 56, 68, 109, 103, 77,
        24, 35, 55, 64, 81, 104, 113, 92,
        49, 64, 78, 87, 103, 121, 120, 101,
        72, 92, 95, 98, 112, 100, 103, 99
    ]

    @Test("libjpeg-turbo: the SSIM-tuned luma table is the one written, scaled by quality as libjpeg scales; chroma keeps the standard table")
    func ssimTunedQuantization() throws {
        let photo = try ImageDecoder(options: DecodingOptions(maxPixelSize: 200)).decode(TestImages.sample("Path.jpg"))
        // libjpeg's jpeg_quality_scaling: 5000/q below 50, 200 − 2q from 50; steps clamped to 1...255.
        let scaled = { (table: [Int], quality: Int) -> [Int] in
            let percent = quality < 50 ? 5000 / quality : 200 - 2 * quality
            return table.map { min(255, max(1, ($0 * percent + 50) / 100)) }
        }
        let q50 = JPEGSegments.quantizationTables(
            try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: 50, quantization: .ssimTuned, encoder: .libjpegTurbo)))
        #expect(q50[0] == Self.ssimTunedAtQuality50)
        for quality in [20, 50, 75, 95] {
            let standard = JPEGSegments.quantizationTables(
                try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: quality, encoder: .libjpegTurbo)))
            let tunedData = try ImageEncoder.jpeg(
                photo, options: JPEGEncodingOptions(quality: quality, quantization: .ssimTuned, encoder: .libjpegTurbo))
            let tuned = JPEGSegments.quantizationTables(tunedData)
            #expect(tuned[0] == scaled(Self.ssimTunedAtQuality50, quality), "quality \(quality)")
            #expect(standard[0] == scaled(Self.annexKLuma, quality), "quality \(quality)")
            #expect(tuned[1] == standard[1] && tuned[1] != nil, "quality \(quality)")
            #expect(try ImageDecoder().decode(tunedData).width == photo.width)
        }
    }

    @Test("a chroma quality scales only the chroma table: the luma table and the decoded luma stay, chroma bytes move")
    func chromaQuality() throws {
        let photo = try ImageDecoder(options: DecodingOptions(maxPixelSize: 320)).decode(TestImages.sample("ColorfulCups.jpg"))
        let encode = { (chroma: Int?) in
            try ImageEncoder.jpeg(
                photo, options: JPEGEncodingOptions(quality: 60, progressive: true, quantization: .ssimTuned, chromaQuality: chroma))
        }
        let (same, coarse, fine) = (try encode(nil), try encode(30), try encode(90))
        let tables = [same, coarse, fine].map(JPEGSegments.quantizationTables)
        for quality in [60, 30, 90] {
            // The chroma table at `quality` is the one libjpeg writes when both use it.
            let standard = JPEGSegments.quantizationTables(try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: quality)))
            let written = tables[[60, 30, 90].firstIndex(of: quality)!]
            #expect(written[1] == standard[1] && written[1] != nil, "chroma quality \(quality)")
            #expect(written[0] == tables[0][0], "luma table at chroma quality \(quality)")
        }
        #expect(coarse.count < same.count && same.count < fine.count, "bytes \(coarse.count) \(same.count) \(fine.count)")
        // Luma is coded on its own: the grayscale decode is identical whatever the chroma.
        let luma = try [same, coarse, fine].map { try ImageDecoder(options: DecodingOptions(grayscale: true)).decode($0).pixels }
        #expect(luma[0] == luma[1] && luma[0] == luma[2])
        let colour = try [same, coarse].map { try ImageDecoder().decode($0).pixels }
        #expect(colour[0] != colour[1])
        #expect(throws: ImageCodecError.invalidArgument("JPEG chroma quality must be 1...100, got 0")) { try encode(0) }
        #expect(throws: ImageCodecError.invalidArgument("JPEG chroma quality must be 1...100, got 101")) { try encode(101) }
    }

    @Test("alpha is composited over the background colour for JPEG")
    func alphaOverBackground() throws {
        let source = TestImages.make(width: 32, height: 16, format: .rgba) { x, _ in x < 16 ? [255, 0, 0, 0] : [0, 0, 255, 128] }
        let white = try ImageDecoder().decode(ImageEncoder.jpeg(source, options: JPEGEncodingOptions(quality: 100, chromaSubsampling: .s444)))
        #expect(white.format == .rgb)
        #expect(Array(white.pixel(x: 4, y: 8)).elementsEqual([255, 255, 255], by: { abs(Int($0) - Int($1)) <= 3 }))
        #expect(Array(white.pixel(x: 28, y: 8)).elementsEqual([127, 127, 255], by: { abs(Int($0) - Int($1)) <= 3 }))
        let black = try ImageDecoder().decode(
            ImageEncoder.jpeg(source, options: JPEGEncodingOptions(quality: 100, chromaSubsampling: .s444, background: .black)))
        #expect(Array(black.pixel(x: 4, y: 8)).elementsEqual([0, 0, 0], by: { abs(Int($0) - Int($1)) <= 3 }))
        let grayAlpha = TestImages.make(width: 8, height: 8, format: .grayAlpha) { _, _ in [0, 0] }
        #expect(try grayAlpha.flattened().pixels == [UInt8](repeating: 255, count: 64))
    }

    @Test("a PNG keeps a valid ICC profile byte for byte and drops one libpng distrusts instead of failing")
    func pngICCProfiles() throws {
        let keep = DecodingOptions(maxPixelSize: 64, colorManagement: .preserveSource)
        // Valid: Little CMS' sRGB (ColorfulCups.jpg), HP's sRGB (Path.jpg), a Display P3.
        let valid = [
            try #require(try ImageDecoder(options: keep).decode(TestImages.sample("ColorfulCups.jpg")).iccProfile),
            try #require(try ImageDecoder(options: keep).decode(TestImages.sample("Path.jpg")).iccProfile),
            try ColorFixtures.profile("DisplayP3.icc")
        ]
        #expect(valid.map(\.count) == [6924, 3144, 660])
        // Distrusted: too short to be a profile, and a header whose length field (10,000) is
        // not the profile's length.
        var lying = Array(valid[2])
        lying[0...3] = [0, 0, 0x27, 0x10]
        let distrusted: [[UInt8]] = [[1, 2, 3, 4, 5], lying]
        for (profile, expected) in valid.map({ ($0, $0 as [UInt8]?) }) + distrusted.map({ ($0, nil as [UInt8]?) }) {
            var bitmap = TestImages.quadrants(width: 8, height: 8)
            bitmap.iccProfile = profile
            let decoded = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(ImageEncoder.png(bitmap))
            let kept = decoded.iccProfile == expected
            #expect(
                kept,
                "profile of \(profile.count) bytes: expected \(expected == nil ? "dropped" : "kept"), got \(decoded.iccProfile?.count ?? 0) bytes")
            #expect(decoded.pixels == bitmap.pixels)
        }
    }

    @Test("invalid encoder arguments are typed errors")
    func invalidArguments() throws {
        let bitmap = TestImages.quadrants(width: 8, height: 8)
        for quality in [0, 101, -5] {
            #expect(throws: ImageCodecError.invalidArgument("JPEG quality must be 1...100, got \(quality)")) {
                try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: quality))
            }
        }
        #expect(throws: ImageCodecError.self) { try ImageEncoder.png(bitmap, options: PNGEncodingOptions(compressionLevel: 10)) }
        #expect(throws: ImageCodecError.self) { try Bitmap(width: 2, height: 2, format: .rgb, pixels: [1, 2, 3]) }
        #expect(throws: ImageCodecError.self) { try Bitmap(width: 0, height: 2, format: .rgb, pixels: []) }
        #expect(throws: ImageCodecError.invalidArgument("maxPixelSize must be positive, got 0")) {
            try ImageDecoder(options: DecodingOptions(maxPixelSize: 0)).decode(ImageEncoder.jpeg(bitmap))
        }
    }
}

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("100 decodes from many tasks give the same pixels as one at a time")
    func parallelDecodes() async throws {
        let inputs = [
            try TestImages.sample("Kite.jpg"), try TestImages.sample("Autumn.jpg"),
            try ImageEncoder.png(TestImages.quadrants(width: 300, height: 200))
        ]
        let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 200))
        let expected = try inputs.map { try decoder.decode($0) }
        let results = try await withThrowingTaskGroup(of: (Int, Bitmap).self) { group in
            for index in 0..<100 {
                group.addTask { (index, try decoder.decode(inputs[index % inputs.count])) }
            }
            return try await group.reduce(into: [(Int, Bitmap)]()) { $0.append($1) }
        }
        #expect(results.count == 100)
        for (index, bitmap) in results { #expect(bitmap == expected[index % inputs.count]) }
    }
}
