import CImageKernels
import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// The perceptual encoder: standard JPEGs that libjpeg-turbo and Pillow read, as close to the
/// source as its quality says, at every shape, and the same bytes every time.
@Suite("Perceptual JPEG encoder")
struct PerceptualJPEGTests {
    /// Mean absolute difference per channel sample, 0...255.
    static func meanError(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.format == b.format)
        let total = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(a.pixels.count)
    }

    static func photo(_ name: String = "Path.jpg", side: Int = 320) throws -> Bitmap {
        try ImageDecoder(options: DecodingOptions(maxPixelSize: side)).decode(TestImages.sample(name))
    }

    @Test("on photos it is as close as libjpeg-turbo at the same quality, in fewer bytes", arguments: [50, 75, 90])
    func closeInFewerBytes(quality: Int) throws {
        for name in ["Path.jpg", "ColorfulCups.jpg", "Sunset.jpg"] {
            let photo = try Self.photo(name)
            let new = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: quality))
            let old = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: quality, encoder: .libjpegTurbo))
            let (newError, oldError) = (Self.meanError(photo, try ImageDecoder().decode(new)), Self.meanError(photo, try ImageDecoder().decode(old)))
            // Measured: 0.9-1.2× libjpeg-turbo's mean error at 0.75-0.95× its bytes.
            #expect(newError <= oldError * 1.35, "\(name) q\(quality): \(newError) against \(oldError)")
            #expect(new.count < old.count, "\(name) q\(quality): \(new.count) bytes against \(old.count)")
            #expect(newError < [50: 7.0, 75: 5.0, 90: 3.5][quality]!, "\(name) q\(quality): \(newError)")
        }
    }

    @Test("Pillow decodes it to the pixels libjpeg-turbo gives")
    func pillowReadsIt() throws {
        let photo = try Self.photo("ColorfulCups.jpg", side: 200)
        for options in [JPEGEncodingOptions(quality: 80), JPEGEncodingOptions(quality: 60, chromaSubsampling: .s444, progressive: true)] {
            let data = try ImageEncoder.jpeg(photo, options: options)
            let ours = try ImageDecoder().decode(data)
            let input = FileManager.default.temporaryDirectory.appendingPathComponent("perceptual-\(UUID().uuidString).jpg")
            try data.write(to: input)
            defer { try? FileManager.default.removeItem(at: input) }
            let script = "import sys; from PIL import Image; Image.open(sys.argv[1]).convert('RGB').save(sys.argv[2], 'PNG')"
            let png = try ReferenceTool.output("python3", package: "python3-pil", suffix: ".png") { output in
                ["-c", script, input.path, output.path]
            }
            let pillow = try ImageDecoder().decode(png)
            #expect(pillow.width == photo.width && pillow.height == photo.height)
            // Both are libjpeg-family decoders; upsampling and IDCT may differ by a level or two.
            #expect(Self.meanError(ours, pillow) < 1.5)
            #expect(Self.meanError(photo, pillow) < 6)
        }
    }

    @Test("1×1, 1×65500 and 65500×1 images round-trip at their size and colour; 65535 is a clear error")
    func extremeShapes() throws {
        for (width, height) in [(1, 1), (1, 65500), (65500, 1), (17, 9)] {
            let bitmap = TestImages.make(width: width, height: height, format: .rgb) { _, _ in [200, 60, 30] }
            for subsampling in JPEGEncodingOptions.ChromaSubsampling.allCases {
                let data = try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 90, chromaSubsampling: subsampling))
                let decoded = try ImageDecoder().decode(data)
                #expect(decoded.width == width && decoded.height == height)
                let error = Self.meanError(bitmap, decoded)
                #expect(error < 3, "\(width)×\(height) \(subsampling.rawValue): \(error)")
            }
        }
        for (width, height) in [(1, 65535), (65535, 1)] {
            let bitmap = TestImages.make(width: width, height: height, format: .gray) { _, _ in [10] }
            for encoder in JPEGEncodingOptions.Encoder.allCases {
                #expect(throws: ImageCodecError.invalidArgument("a JPEG may be at most 65500 pixels a side, got \(width)×\(height)")) {
                    try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(encoder: encoder))
                }
            }
        }
    }

    @Test("a flat image comes back flat, within a level; gray stays one component")
    func flatAndGray() throws {
        let gray = TestImages.make(width: 40, height: 24, format: .gray) { _, _ in [117] }
        let data = try ImageEncoder.jpeg(gray, options: JPEGEncodingOptions(quality: 50))
        let decoded = try ImageDecoder().decode(data)
        #expect(decoded.format == .gray)
        // DC alone: every pixel the same, off by at most the DC step's rounding.
        #expect(Set(decoded.pixels).count == 1 && abs(Int(decoded.pixels[0]) - 117) <= 1, "\(Set(decoded.pixels))")
        let colour = TestImages.make(width: 40, height: 24, format: .rgb) { _, _ in [90, 160, 220] }
        let back = try ImageDecoder().decode(try ImageEncoder.jpeg(colour, options: JPEGEncodingOptions(quality: 50)))
        #expect(Self.meanError(colour, back) < 1.5)
    }

    @Test("the fast DCT, its scale divided out, is JPEG's DCT by its definition")
    func forwardDCTMatchesDefinition() throws {
        var generator = SeededGenerator()
        let seed = generator.replay
        for _ in 0..<200 {
            let samples = (0..<64).map { _ in Float(Int.random(in: -128...127, using: &generator)) }
            var flat = samples
            iec_fdct(&flat, ForwardDCT.transposedBasis, ForwardDCT.cosines)
            let block = (0..<8).map { u in Array(flat[(8 * u)..<(8 * u + 8)]) }
            var worst = 0.0
            for u in 0..<8 {
                for v in 0..<8 {
                    // T.81 A.3.3: F(u, v) = ¼ C(u) C(v) Σ Σ f(y, x) cos((2y + 1)uπ/16) cos((2x + 1)vπ/16).
                    var sum = 0.0
                    for y in 0..<8 {
                        for x in 0..<8 {
                            sum +=
                                Double(samples[8 * y + x]) * cos(Double(2 * y + 1) * Double(u) * .pi / 16)
                                * cos(Double(2 * x + 1) * Double(v) * .pi / 16)
                        }
                    }
                    let expected = 0.25 * (u == 0 ? 0.5.squareRoot() : 1) * (v == 0 ? 0.5.squareRoot() : 1) * sum
                    let actual = Double(block[u][v]) / Double(ForwardDCT.outputScale(u: u))
                    worst = max(worst, abs(actual - expected))
                }
            }
            // Float rounding over a few dozen operations on values up to 1024.
            #expect(worst < 2e-3, "seed \(seed): off by \(worst)")
        }
    }

    @Test("noise: bounded error, and the same bytes every time")
    func noiseIsDeterministic() throws {
        var generator = SeededGenerator()
        let seed = generator.replay
        let pixels = (0..<(96 * 64 * 3)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let noise = try Bitmap(width: 96, height: 64, format: .rgb, pixels: pixels)
        let first = try ImageEncoder.jpeg(noise, options: JPEGEncodingOptions(quality: 75, chromaSubsampling: .s444))
        let second = try ImageEncoder.jpeg(noise, options: JPEGEncodingOptions(quality: 75, chromaSubsampling: .s444))
        #expect(first == second, "seed \(seed)")
        let error = Self.meanError(noise, try ImageDecoder().decode(first))
        #expect(error < 40, "seed \(seed): \(error)")
    }

    @Test("the options take effect: progressive scans, sampling factors, the ICC profile, the quality tables")
    func options() throws {
        let photo = try Self.photo(side: 120)
        let progressive = try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(progressive: true))
        #expect(JPEGSegments.markers(progressive).contains(0xC2))
        #expect(try ImageDecoder.header(of: progressive).progressive)
        for (subsampling, factor) in [(JPEGEncodingOptions.ChromaSubsampling.s420, 0x22), (.s422, 0x21), (.s444, 0x11)] {
            let bytes = [UInt8](try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(chromaSubsampling: subsampling)))
            let start = try #require((2..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
            #expect(Int(bytes[start + 11]) == factor, "\(subsampling.rawValue)")
        }
        // Lower quality, coarser tables, fewer bytes; chroma quality moves only the chroma table.
        let (low, high) = (try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: 40)), try ImageEncoder.jpeg(photo))
        #expect(low.count < high.count)
        let (lowTables, highTables) = (JPEGSegments.quantizationTables(low), JPEGSegments.quantizationTables(high))
        #expect(zip(lowTables[0] ?? [], highTables[0] ?? []).allSatisfy { $0 >= $1 })
        let chroma = JPEGSegments.quantizationTables(try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(chromaQuality: 40)))
        #expect(chroma[0] == highTables[0] && chroma[1] == lowTables[1])
        var profiled = photo
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        profiled.iccProfile = profile
        let withProfile = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(ImageEncoder.jpeg(profiled))
        #expect(withProfile.iccProfile == profile)
    }

    @Test("a quality fraction lies between its two integer qualities; 0 changes nothing; 1 and NaN are refused")
    func qualityFraction() throws {
        let photo = try Self.photo()
        func encoded(_ quality: Int, _ fraction: Double = 0) throws -> Data {
            try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(quality: quality, qualityFraction: fraction))
        }
        let (q90, q91, half) = (try encoded(90), try encoded(91), try encoded(90, 0.5))
        #expect(try encoded(90, 0) == q90)
        #expect(q90.count < half.count && half.count < q91.count, "\(q90.count) < \(half.count) < \(q91.count)")
        let tables = JPEGSegments.quantizationTables(half)[0] ?? []
        #expect(zip(tables, JPEGSegments.quantizationTables(q90)[0] ?? []).allSatisfy { $0 <= $1 })
        #expect(tables != JPEGSegments.quantizationTables(q90)[0] && tables != JPEGSegments.quantizationTables(q91)[0])
        for bad in [1.0, -0.1, .nan] {
            #expect(throws: ImageCodecError.self) { try encoded(90, bad) }
        }
        #expect(throws: ImageCodecError.self) { try encoded(100, 0.5) }
    }

    @Test("an output past its limit fails as out of memory, through the shim")
    func outputLimit() throws {
        let photo = try Self.photo(side: 200)
        #expect(throws: ImageCodecError.outOfMemory) {
            try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(), maximumOutputBytes: 2000)
        }
    }
}
