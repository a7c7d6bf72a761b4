import CImageCodecShim
import CTestImageWriter
import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// What a JPEG warning costs decides whether it is an error: bytes merely out of place are
/// tolerated and recorded; pixels libjpeg had to invent or drop are an error by default.
@Suite("JPEG damage policy")
struct JPEGDamagePolicyTests {
    static let photo = TestImages.make(width: 64, height: 48, format: .rgb) { x, y in
        [UInt8(truncatingIfNeeded: x * 4 + y), UInt8(truncatingIfNeeded: y * 5 ^ x), UInt8(truncatingIfNeeded: x * y)]
    }

    /// A JPEG written by libjpeg directly: restart intervals and progression on request.
    static func jpeg(restartInterval: Int = 0, progressive: Bool = false) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        try #require(test_jpeg_write_rgb(64, 48, photo.pixels, 90, Int32(restartInterval), progressive ? 1 : 0, &output, &length) == 0)
        defer { test_png_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// Offsets of marker `code` (FF code) in `bytes`.
    static func markers(_ code: UInt8, in bytes: [UInt8]) -> [Int] {
        (0..<(bytes.count - 1)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == code }
    }

    static func decode(_ bytes: [UInt8], partial: Bool = false) throws(ImageCodecError) -> DecodedImage {
        try ImageDecoder(options: DecodingOptions(allowsPartialImages: partial)).decodeImage(Data(bytes))
    }

    @Test(
        "padding that costs no pixel is tolerated, recorded, and decodes to the same pixels",
        arguments: ["before EOI", "before a restart marker", "between progressive scans"])
    func padding(_ place: String) throws {
        let clean: [UInt8]
        var padded: [UInt8]
        switch place {
        case "before EOI":
            clean = try Self.jpeg()
            padded = clean
            // More than the entropy decoder's 8 bytes of read-ahead: bytes it has already
            // taken into its bit buffer are dropped with the scan's padding bits, unreported.
            padded.insert(contentsOf: (0..<16).map { UInt8($0 * 0x10) }, at: clean.count - 2)
        case "before a restart marker":
            clean = try Self.jpeg(restartInterval: 2)
            let restart = try #require((0xD0...0xD7).flatMap { Self.markers(UInt8($0), in: clean) }.min())
            padded = clean
            padded.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: restart) // fill bytes, as T.81 B.1.1.2 allows
        default:
            clean = try Self.jpeg(progressive: true)
            // The second scan's header: padding after the first scan's data.
            let scans = Self.markers(0xDA, in: clean)
            try #require(scans.count > 2)
            let nextSegment = try #require(Self.markers(0xC4, in: clean).first { $0 > scans[0] } ?? scans.dropFirst().first)
            padded = clean
            // More than libjpeg's bit buffer reads ahead, so the rest is skipped as padding.
            padded.insert(contentsOf: [UInt8](repeating: 0x00, count: 64), at: nextSegment)
        }
        let reference = try Self.decode(clean).bitmap
        let decoded = try Self.decode(padded)
        #expect(decoded.bitmap == reference)
        if place != "before a restart marker" { // 0xFF fill bytes are legal there and raise nothing
            #expect(decoded.warnings.contains { $0.code == Int(JWRN_EXTRANEOUS_DATA.rawValue) }, "\(decoded.warnings)")
        }
    }

    @Test("a baseline file whose scan header says Se=0 decodes identically, with NOT_SEQUENTIAL recorded")
    func notSequential() throws {
        let clean = try Self.jpeg()
        var patched = clean
        let scan = try #require(Self.markers(0xDA, in: clean).first)
        let components = Int(clean[scan + 4])
        patched[scan + 5 + 2 * components + 1] = 0 // Se
        let decoded = try Self.decode(patched)
        #expect(decoded.bitmap == (try Self.decode(clean).bitmap))
        #expect(decoded.warnings.map(\.code) == [Int(JWRN_NOT_SEQUENTIAL.rawValue)])
    }

    @Test("a marker in the middle of the entropy data is an error, unless partial images are allowed")
    func corruptEntropy() throws {
        var damaged = try Self.jpeg()
        let scan = try #require(Self.markers(0xDA, in: damaged).first)
        damaged.insert(contentsOf: [0xFF, 0xD5], at: (scan + damaged.count) / 2)
        let error = #expect(throws: ImageCodecError.self) { try Self.decode(damaged) }
        if case .corruptData(let message)? = error {
            #expect(message.contains("Corrupt JPEG data"), "\(message)")
        } else {
            Issue.record("expected corruptData, got \(String(describing: error))")
        }
        let partial = try Self.decode(damaged, partial: true)
        #expect(partial.bitmap.width == 64 && !partial.warnings.isEmpty)
    }

    @Test("truncation is an error in the data and in the header, strict or lenient")
    func truncation() throws {
        let clean = try Self.jpeg()
        let scan = try #require(Self.markers(0xDA, in: clean).first)
        #expect(throws: ImageCodecError.truncatedData) { try Self.decode(Array(clean.prefix(clean.count - 40))) }
        // Cut inside the quantization table, before any frame header.
        let table = try #require(Self.markers(0xDB, in: clean).first)
        for partial in [false, true] {
            #expect(throws: ImageCodecError.truncatedData) { try Self.decode(Array(clean.prefix(table + 20)), partial: partial) }
        }
        #expect(scan > table)
    }
}

/// The shim's error paths: allocation failures, limits, and what a gray output carries.
@Suite("Codec error paths")
struct CodecErrorPathTests {
    static func noise(_ width: Int, _ height: Int) -> Bitmap {
        var generator = SeededGenerator(seed: 19)
        return TestImages.make(width: width, height: height, format: .rgb) { _, _ in
            [UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator)]
        }
    }

    @Test("an output buffer that cannot grow fails the encode cleanly (no double free, no leak), again and again", arguments: ["jpeg", "png"])
    func outputCannotGrow(_ format: String) throws {
        let bitmap = Self.noise(256, 256)
        for limit in [1, 100, 4096, 30_000] {
            do {
                _ =
                    format == "jpeg"
                    ? try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 95), maximumOutputBytes: limit)
                    : try ImageEncoder.png(bitmap, options: PNGEncodingOptions(), maximumOutputBytes: limit)
                Issue.record("\(format) of random pixels fitted in \(limit) bytes")
            } catch {
                #expect(error == .outOfMemory, "\(format), limit \(limit)")
            }
        }
        // And with room, the same call succeeds.
        let data =
            format == "jpeg"
            ? try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 95), maximumOutputBytes: 1 << 20)
            : try ImageEncoder.png(bitmap, options: PNGEncodingOptions(), maximumOutputBytes: 1 << 20)
        #expect(try ImageDecoder().decode(data).width == 256)
    }

    /// A PNG of `width`×`height` 1-bit gray pixels, all white: tiny, whatever its size.
    static func widePNG(width: Int, height: Int) throws -> Data {
        let rowBytes = (width + 7) / 8
        let samples = [UInt8](repeating: 0xFF, count: rowBytes * height)
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        try #require(
            test_png_write(
                UInt32(width), UInt32(height), 1, 0, 0, samples, rowBytes, nil, 0, nil, 0, -1, -1, 0, 0,
                &output, &length) == 0)
        defer { test_png_free(output) }
        return Data(bytes: try #require(output), count: length)
    }

    @Test("a 30,000,000×1 PNG is refused by its side before any row is allocated")
    func absurdWidth() throws {
        let png = try Self.widePNG(width: 30_000_000, height: 1)
        #expect(png.count < 100_000)
        #expect(try ImageDecoder.header(of: png).width == 30_000_000)
        #expect(throws: ImageCodecError.dimensionTooLarge(width: 30_000_000, height: 1, limit: 100_000)) {
            try ImageDecoder(options: DecodingOptions(maxPixelSize: 100)).decode(png)
        }
    }

    @Test("what the decoder accepts, the encoder can write: 1,000,001×2 round-trips through PNG")
    func encoderSideLimit() throws {
        let png = try Self.widePNG(width: 1_000_001, height: 2)
        let limits = DecodingLimits(maxDimension: 2_000_000)
        let bitmap = try ImageDecoder(options: DecodingOptions(limits: limits)).decode(png)
        #expect(bitmap.width == 1_000_001 && bitmap.format == .gray)
        let written = try ImageEncoder.png(bitmap)
        #expect(try ImageDecoder(options: DecodingOptions(limits: limits)).decode(written) == bitmap)
    }

    @Test("a huge pixel limit does not overflow the memory ceiling derived from it")
    func hugeLimit() throws {
        let limits = DecodingLimits(maxPixelCount: .max)
        #expect(limits.jpegMemoryLimit == .max)
        let jpeg = try ImageEncoder.jpeg(Self.noise(32, 32))
        #expect(try ImageDecoder(options: DecodingOptions(limits: limits)).decode(jpeg).width == 32)
    }

    @Test("a gray output drops an RGB profile (it describes three channels) and keeps a gray one")
    func grayProfile() throws {
        func profile(_ space: String) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 132)
            bytes.replaceSubrange(16..<20, with: Array(space.utf8))
            bytes.replaceSubrange(36..<40, with: Array("acsp".utf8))
            return bytes
        }
        var rgb = Self.noise(16, 16)
        rgb.iccProfile = profile("RGB ")
        #expect(try rgb.grayscaled().iccProfile == nil)
        var gray = try Bitmap(width: 1, height: 1, format: .rgb, pixels: [1, 2, 3])
        gray.iccProfile = profile("GRAY")
        #expect(try gray.grayscaled().iccProfile == profile("GRAY"))
        // The luma-only decode of a profiled colour JPEG writes no ICC marker into its gray output.
        let source = try ImageEncoder.jpeg(rgb)
        let luma = try ImageDecoder(options: DecodingOptions(grayscale: true)).decode(source)
        let written = [UInt8](try ImageEncoder.jpeg(luma))
        #expect(luma.iccProfile == nil && HostileInputTests.find(Array("ICC_PROFILE".utf8), in: written) == nil)
    }
}
