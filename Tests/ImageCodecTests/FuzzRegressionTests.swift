import Foundation
import Testing
import TestSupport
@_spi(Fuzzing) @testable import ImageCodec

/// Every input the fuzzers ever flagged (Tests/Fixtures/fuzz-regressions/TARGET) and every seed
/// they start from (Fuzz/Corpus/TARGET), through the same calls as the fuzz targets: a typed
/// error or a sound result, never a crash. Run again under AddressSanitizer with leak detection
/// by scripts/test.sh.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    @Test("header probes and decodes, with the options the first byte picks", arguments: ["jpeg", "png", "webp", "heif"])
    func decoding(_ format: String) throws {
        let headers = try FuzzInputs.files(for: "\(format)-header")
        let decodes = try FuzzInputs.files(for: "\(format)-decode")
        #expect(headers.count >= 8 && decodes.count >= 8, "the seed corpora are missing")
        for (name, data) in headers {
            // Traps (a failed run) when the header read allocates over its bound.
            _ = FuzzingEntryPoints.boundedHeader(data)
            _ = name
        }
        for (name, data) in decodes {
            guard let selector = data.first, let decoded = FuzzingEntryPoints.boundedDecode(data.dropFirst(), selector: selector) else { continue }
            let bitmap = decoded.bitmap
            #expect(bitmap.pixels.count == bitmap.width * bitmap.height * bitmap.format.channels, "\(name)")
        }
    }

    @Test("animations frame by frame: a typed error or frames within the decoder's plan", arguments: ["gif-decode", "webp-animation"])
    func animation(_ target: String) throws {
        let inputs = try FuzzInputs.files(for: target)
        #expect(inputs.count >= 8, "the seed corpus is missing")
        var animated = 0
        for (_, data) in inputs {
            guard let selector = data.first else { continue }
            // Traps (a failed run) when the frames charge more than the plan or change size.
            if FuzzingEntryPoints.boundedAnimation(data.dropFirst(), selector: selector) > 1 { animated += 1 }
        }
        #expect(animated >= 4, "the seeds' animations decode to several frames")
    }

    @Test("the HEIF container walk: a typed error or counts within its limits")
    func heifContainer() throws {
        let inputs = try FuzzInputs.files(for: "heif-container")
        #expect(inputs.count >= 8, "the seed corpus is missing")
        var passed = 0
        for (_, data) in inputs {
            // Traps (a failed run) when a walk that passed reports counts over its limits.
            FuzzingEntryPoints.checkedHEIFContainer(data)
            if (try? data.withUnsafeBytes({ (bytes) throws(ImageCodecError) in try HEIFContainer(bytes, limits: DecodingLimits()) })) != nil {
                passed += 1
            }
        }
        // The sound seeds (8 samples, the 2×2 grid, the 8 KiB profile, the grid whose tiles share
        // one tile's bytes, 500 thumbnails sharing the primary's) pass; the rest do not.
        #expect(passed == 12)
    }

    @Test("EXIF orientation parsing yields 1...8 or nothing; the copyright and upright edits hold")
    func exif() throws {
        let inputs = try FuzzInputs.files(for: "exif-orientation")
        #expect(inputs.count >= 8)
        for (name, data) in inputs {
            FuzzingEntryPoints.checkEXIFEdits(tiff: [UInt8](data))
            for value in [FuzzingEntryPoints.exifOrientation(tiff: [UInt8](data)), FuzzingEntryPoints.exifOrientation(app1: [UInt8](data))] {
                if let value { #expect((1...8).contains(value), "\(name)") }
            }
        }
    }

    @Test("decode → encode → decode keeps size and format")
    func roundTrip() throws {
        let inputs = try FuzzInputs.files(for: "encode-roundtrip")
        #expect(inputs.count >= 8)
        for (name, data) in inputs {
            guard let selector = data.first else { continue }
            let (options, jpegOptions) = FuzzingEntryPoints.roundTrip(selector: selector)
            guard let bitmap = try? ImageDecoder(options: options).decode(data.dropFirst()) else { continue }
            let jpeg = try ImageDecoder().decode(try ImageEncoder.jpeg(bitmap, options: jpegOptions))
            #expect(jpeg.width == bitmap.width && jpeg.height == bitmap.height, "\(name)")
            let png = try ImageDecoder().decode(try ImageEncoder.png(bitmap))
            #expect(png.format == bitmap.format && png.pixels == bitmap.pixels, "\(name)")
        }
    }
}
