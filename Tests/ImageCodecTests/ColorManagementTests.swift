import Dispatch
import CTestImageWriter
import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// Profiled sources against Little CMS' own `transicc`: the decoder must give the sRGB values
/// it computes (relative colorimetric, black point compensation) within 2 levels.
@Suite("Colour management")
struct ColorManagementTests {
    /// Saturated and everyday colours: the ones where a P3 photo shown as sRGB is visibly off.
    static let patches: [[UInt8]] = [
        [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [0, 255, 255], [255, 0, 255],
        [230, 40, 60], [255, 128, 0], [40, 160, 60], [30, 80, 200], [224, 172, 140], [200, 220, 240],
        [0, 0, 0], [64, 64, 64], [128, 128, 128], [255, 255, 255]
    ]
    static let patchSize = 16
    static let columns = 4

    /// `patches` as 16×16 squares, 4 per row, so each is a whole JPEG block (4:4:4) and flat.
    static func patchBitmap(_ colors: [[UInt8]], format: PixelFormat = .rgb) -> Bitmap {
        let rows = (colors.count + columns - 1) / columns
        return TestImages.make(width: columns * patchSize, height: rows * patchSize, format: format) { x, y in
            let index = min(colors.count - 1, (y / patchSize) * columns + x / patchSize)
            return format.hasAlpha ? colors[index] + [UInt8(128 + index)] : colors[index]
        }
    }

    /// The centre pixel of each patch of a decoded patch bitmap (of any size).
    static func centres(_ bitmap: Bitmap, count: Int) -> [[UInt8]] {
        let rows = (count + columns - 1) / columns
        return (0..<count).map { index in
            let x = (index % columns * 2 + 1) * bitmap.width / (columns * 2)
            let y = (index / columns * 2 + 1) * bitmap.height / (rows * 2)
            return Array(bitmap.pixel(x: x, y: y))
        }
    }

    static func expectClose(_ actual: [[UInt8]], _ expected: [[UInt8]], tolerance: Int = 2, _ what: String) {
        for (index, (got, want)) in zip(actual, expected).enumerated() {
            let difference = zip(got, want).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(difference <= tolerance, "\(what): patch \(index) \(patches[index]) decoded \(got), transicc \(want)")
        }
    }

    static func tagged(_ bitmap: Bitmap, _ profile: [UInt8]?) -> Bitmap {
        var copy = bitmap
        copy.iccProfile = profile
        return copy
    }

    @Test(
        "Display P3 and Adobe RGB PNGs decode to transicc's sRGB values, at full size and downsampled",
        arguments: ["DisplayP3.icc", "AdobeRGB-compatible.icc"])
    func rgbProfilesInPNG(profileName: String) throws {
        let profile = try ColorFixtures.profile(profileName)
        let png = try ImageEncoder.png(Self.tagged(Self.patchBitmap(Self.patches), profile))
        let expected = try ColorFixtures.transicc(Self.patches, from: profileName)
        // Decoding without conversion would be off by far more than the tolerance.
        #expect(zip(expected, Self.patches).contains { zip($0, $1).contains { abs(Int($0) - Int($1)) > 10 } })
        let full = try ImageDecoder().decode(png)
        #expect(full.iccProfile == nil)
        Self.expectClose(Self.centres(full, count: Self.patches.count), expected, "\(profileName) full size")
        let small = try ImageDecoder(options: DecodingOptions(maxPixelSize: 32)).decode(png)
        #expect(small.width == 32)
        Self.expectClose(Self.centres(small, count: Self.patches.count), expected, "\(profileName) at 32 px")
    }

    @Test("a Display P3 JPEG decodes to transicc's sRGB values of its stored pixels, DCT-scaled and resampled too")
    func displayP3JPEG() throws {
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        let jpeg = try TestImages.faithfulJPEG(Self.tagged(Self.patchBitmap(Self.patches), profile))
        for maxPixelSize in [nil, 32] as [Int?] {
            // The stored values (JPEG is lossy) are what transicc must convert.
            let stored = try ImageDecoder(options: DecodingOptions(maxPixelSize: maxPixelSize, colorManagement: .preserveSource)).decode(jpeg)
            #expect(stored.iccProfile == profile)
            let storedCentres = Self.centres(stored, count: Self.patches.count)
            let converted = try ImageDecoder(options: DecodingOptions(maxPixelSize: maxPixelSize)).decode(jpeg)
            #expect(converted.iccProfile == nil && converted.width == stored.width)
            Self.expectClose(
                Self.centres(converted, count: Self.patches.count), try ColorFixtures.transicc(storedCentres, from: "DisplayP3.icc"),
                "P3 JPEG at \(maxPixelSize.map(String.init) ?? "full") size")
        }
    }

    @Test("a CMYK JPEG with a FOGRA39 profile decodes to transicc's values, CMYK and YCCK", arguments: [false, true])
    func cmykWithProfile(asYCCK: Bool) throws {
        let profile = try ColorFixtures.profile("FOGRA39L-colprof.icc")
        // Inks with 255 = full ink; the writer stores Adobe-inverted samples (0 = full ink).
        let inks: [[UInt8]] = [
            [255, 0, 0, 0], [0, 255, 0, 0], [0, 0, 255, 0], [0, 0, 0, 255], [0, 0, 0, 0], [128, 128, 128, 0],
            [0, 200, 180, 20], [200, 60, 0, 40], [40, 30, 30, 100], [255, 255, 255, 255], [60, 0, 220, 0], [0, 0, 0, 128]
        ]
        let width = Self.columns * Self.patchSize, height = inks.count / Self.columns * Self.patchSize
        var samples: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width { samples += inks[(y / Self.patchSize) * Self.columns + x / Self.patchSize].map { 255 - $0 } }
        }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        try #require(
            test_jpeg_write_cmyk(
                UInt32(width), UInt32(height), samples, asYCCK ? 1 : 0, profile, UInt32(profile.count),
                &output, &length) == 0)
        let jpeg = Data(bytes: output!, count: Int(length))
        test_png_free(output)
        let decoded = try ImageDecoder().decodeImage(jpeg)
        #expect(decoded.bitmap.format == .rgb && decoded.bitmap.iccProfile == nil && decoded.warnings.isEmpty)
        let expected = try ColorFixtures.transicc(inks, from: "FOGRA39L-colprof.icc", cmyk: true)
        let got = Self.centres(decoded.bitmap, count: inks.count)
        for (index, (value, want)) in zip(got, expected).enumerated() {
            let difference = zip(value, want).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(difference <= 2, "ink \(inks[index]) decoded \(value), transicc \(want)")
        }
        // The naive formula would give pure cyan (0, 255, 255) for the first ink; the profile does not.
        #expect(got[0][0] < 10 && got[0][1] < 200)
    }

    @Test("a gray PNG with a gray profile decodes to transicc's values on the sRGB curve")
    func grayProfile() throws {
        let levels: [UInt8] = [0, 16, 32, 64, 96, 128, 160, 192, 224, 255, 8, 250]
        let bitmap = Self.tagged(Self.patchBitmap(levels.map { [$0] }, format: .gray), try ColorFixtures.profile("Gray.icc"))
        let decoded = try ImageDecoder().decode(ImageEncoder.png(bitmap))
        #expect(decoded.format == .gray && decoded.iccProfile == nil)
        let expected = try ColorFixtures.transicc(levels.map { [$0] }, from: "Gray.icc").map { [$0[0]] }
        for (index, (got, want)) in zip(Self.centres(decoded, count: levels.count), expected).enumerated() {
            #expect(abs(Int(got[0]) - Int(want[0])) <= 2, "level \(levels[index]): decoded \(got), transicc \(want)")
        }
    }

    @Test("alpha is carried through the conversion unchanged")
    func alphaKept() throws {
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        let bitmap = Self.patchBitmap(Self.patches, format: .rgba)
        let decoded = try ImageDecoder().decode(ImageEncoder.png(Self.tagged(bitmap, profile)))
        let centres = Self.centres(decoded, count: Self.patches.count)
        #expect(centres.enumerated().allSatisfy { $0.element[3] == UInt8(128 + $0.offset) })
        Self.expectClose(centres.map { Array($0.prefix(3)) }, try ColorFixtures.transicc(Self.patches, from: "DisplayP3.icc"), "P3 RGBA")
    }

    /// `jpeg` with its APP2 ICC segments removed.
    static func strippingICC(_ jpeg: Data) -> Data {
        var bytes = [UInt8](jpeg)
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] != 0xDA {
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if bytes[offset + 1] == 0xE2 { bytes.removeSubrange(offset..<offset + 2 + length) } else { offset += 2 + length }
        }
        return Data(bytes)
    }

    @Test(
        "sRGB-tagged photos (HP and Little CMS sRGB profiles) decode bit-identical to the same file untagged",
        arguments: ["Kite.jpg", "ColorfulCups.jpg"])
    func sRGBUntouched(name: String) throws {
        let tagged = try TestImages.sample(name)
        let untagged = Self.strippingICC(tagged)
        #expect(untagged.count < tagged.count)
        for options in [DecodingOptions(maxPixelSize: 300), DecodingOptions(maxPixelSize: 1000)] {
            let withProfile = try ImageDecoder(options: options).decodeImage(tagged)
            #expect(withProfile.bitmap.iccProfile == nil && withProfile.warnings.isEmpty)
            #expect(withProfile.bitmap.pixels == (try ImageDecoder(options: options).decode(untagged)).pixels)
        }
    }

    @Test("preserveSource keeps the stored values and the profile")
    func preserveSource() throws {
        let profile = try ColorFixtures.profile("DisplayP3.icc")
        let bitmap = Self.patchBitmap(Self.patches)
        let kept = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(ImageEncoder.png(Self.tagged(bitmap, profile)))
        #expect(kept.pixels == bitmap.pixels && kept.iccProfile == profile)
    }

    @Test("preserveSource drops a profile that does not describe the pixels (an RGB profile on a gray JPEG)")
    func preserveSourceMismatch() throws {
        let gray = TestImages.make(width: 32, height: 32, format: .gray) { x, y in [UInt8(x * 8)] }
        var tagged = gray
        tagged.iccProfile = try ColorFixtures.profile("DisplayP3.icc")
        let decoded = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decodeImage(TestImages.faithfulJPEG(tagged))
        #expect(decoded.bitmap.format == .gray && decoded.bitmap.iccProfile == nil)
        #expect(decoded.warnings.contains { $0.message.hasPrefix("ICC profile ignored") }, "\(decoded.warnings)")
        // A gray profile on the same pixels is kept.
        tagged.iccProfile = try ColorFixtures.profile("Gray.icc")
        let kept = try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource)).decode(TestImages.faithfulJPEG(tagged))
        #expect(kept.iccProfile == tagged.iccProfile)
    }

    @Test(
        "the integer tables agree with Little CMS within a level on a million random colours, and are not used for a profile with a lookup table",
        arguments: ["DisplayP3.icc", "AdobeRGB-compatible.icc", "ProPhoto.icc", "P3-matrix-and-LUT.icc"])
    func shaperOffTheProbeGrid(profile name: String) throws {
        guard case .transform(let transform) = ColorTransform.toSRGB(profile: try ColorFixtures.profile(name), layout: .rgb) else {
            Issue.record("\(name) built no transform")
            return
        }
        // The table profile converts through its table in Little CMS: integer tables built from
        // its matrix tags would model another profile between the table's nodes.
        #expect(transform.usesMatrixShaper == (name != "P3-matrix-and-LUT.icc"))
        var generator = SeededGenerator()
        let count = 1_000_000
        var pixels = [UInt8](repeating: 0, count: count * 3)
        for index in pixels.indices { pixels[index] = UInt8.random(in: 0...255, using: &generator) }
        var reference = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { input in
            reference.withUnsafeMutableBufferPointer { transform.apply(input.baseAddress!, $0.baseAddress!, count: count) }
        }
        pixels.withUnsafeMutableBufferPointer { transform.applyInPlace($0.baseAddress!, count: count) }
        let worst = zip(pixels, reference).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
        #expect(worst <= 1, "\(name): \(worst) levels off Little CMS, seed \(generator.seed)")
    }

    @Test(
        "a corrupt or mismatched profile is ignored with a warning: the image decodes as untagged",
        arguments: [
            "truncated tag table", "garbage after the header", "CMYK profile on RGB", "gray profile on RGB"
        ])
    func badProfiles(kind: String) throws {
        let p3 = try ColorFixtures.profile("DisplayP3.icc")
        let profile: [UInt8] =
            switch kind {
            case "truncated tag table": Array(p3.prefix(140))
            case "garbage after the header": Array(p3.prefix(128)) + [UInt8](repeating: 0xEE, count: p3.count - 128)
            case "CMYK profile on RGB": try ColorFixtures.profile("FOGRA39L-colprof.icc")
            default: try ColorFixtures.profile("Gray.icc")
            }
        let bitmap = Self.patchBitmap(Self.patches)
        let decoded = try ImageDecoder().decodeImage(
            ImageEncoder.jpeg(
                Self.tagged(bitmap, profile),
                options: JPEGEncodingOptions(quality: 100, chromaSubsampling: .s444)))
        let untagged = try ImageDecoder().decode(ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 100, chromaSubsampling: .s444)))
        #expect(decoded.bitmap.pixels == untagged.pixels && decoded.bitmap.iccProfile == nil)
        #expect(decoded.warnings.contains { $0.message.hasPrefix("ICC profile ignored") }, "\(decoded.warnings)")
    }

    /// Display P3 with its `chrm` tag's signature renamed to `signature`: a matrix/TRC profile
    /// that now also lists that lookup-table tag (the gate looks at the tag directory).
    static func p3Listing(_ signature: String) throws -> [UInt8] {
        var profile = try ColorFixtures.profile("DisplayP3.icc")
        let count = Int(profile[128]) << 24 | Int(profile[129]) << 16 | Int(profile[130]) << 8 | Int(profile[131])
        let entry = try #require((0..<count).map { 132 + 12 * $0 }.first { Array(profile[$0..<$0 + 4]) == Array("chrm".utf8) })
        profile.replaceSubrange(entry..<entry + 4, with: Array(signature.utf8))
        return profile
    }

    @Test(
        "the integer tables are refused for a profile with any lookup table Little CMS would use: A2B0, A2B1, D2B0 or D2B1 alone",
        arguments: ["A2B0", "A2B1", "D2B0", "D2B1"])
    func lookupTableGate(tag: String) throws {
        #expect(MatrixShaper.hasLookupTable(iccProfile: try ColorFixtures.profile("DisplayP3.icc")) == false)
        #expect(MatrixShaper.hasLookupTable(iccProfile: try Self.p3Listing(tag)) == true, "\(tag) alone must keep Little CMS' transform")
    }

    @Test("two threads building the same new transform at once count one build")
    func racingBuildsCountOnce() throws {
        let p3 = try ColorFixtures.profile("DisplayP3.icc")
        // Each build waits until both have started: both threads build, one result is kept.
        let arrived = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        let cache = ColorTransformCache(capacity: 4) { profile, layout in
            arrived.signal()
            go.wait()
            return ColorTransform.toSRGB(profile: profile, layout: layout)
        }
        let group = DispatchGroup()
        for _ in 0..<2 { DispatchQueue.global().async(group: group) { _ = cache.entry(for: p3, layout: .rgb) } }
        #expect(arrived.wait(timeout: .now() + 10) == .success && arrived.wait(timeout: .now() + 10) == .success)
        go.signal()
        go.signal()
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(cache.statistics.transformsBuilt == 1, "a discarded build was counted")
    }

    @Test("transforms are built once per profile and layout, reused, and evicted beyond the capacity")
    func transformCache() throws {
        let cache = ColorTransformCache(capacity: 2)
        let p3 = try ColorFixtures.profile("DisplayP3.icc"), adobe = try ColorFixtures.profile("AdobeRGB-compatible.icc")
        guard case .transform(let transform) = cache.entry(for: p3, layout: .rgb) else { Issue.record("P3 is not sRGB"); return }
        // A matrix/TRC profile converts through integer tables that matched Little CMS' transform.
        #expect(transform.usesMatrixShaper)
        guard case .transform = cache.entry(for: p3, layout: .rgb) else { Issue.record("P3 is not sRGB"); return }
        #expect(cache.statistics == ColorManagementStatistics(transformsBuilt: 1, cacheHits: 1))
        _ = cache.entry(for: p3, layout: .rgba) // another layout is another transform
        _ = cache.entry(for: adobe, layout: .rgb) // evicts P3/rgb, the oldest
        _ = cache.entry(for: p3, layout: .rgb)
        #expect(cache.statistics.transformsBuilt == 4 && cache.statistics.cacheHits == 1)
        let srgb = [UInt8](
            try ImageDecoder(options: DecodingOptions(colorManagement: .preserveSource))
                .decode(TestImages.sample("ColorfulCups.jpg")).iccProfile ?? [])
        guard case .sRGB = cache.entry(for: srgb, layout: .rgb) else { Issue.record("the sRGB profile was not recognised"); return }
        guard case .rejected = cache.entry(for: Array(p3.prefix(140)), layout: .rgb) else { Issue.record("a broken profile was accepted"); return }
        #expect(cache.statistics.sRGBProfiles == 1 && cache.statistics.ignoredProfiles == 1)
    }

    @Test("the Display P3 sample photo looks like its sRGB original once converted, and not without conversion")
    func displayP3SamplePhoto() throws {
        // SampleImages/Dragonfly-P3.jpg is Dragonfly.jpg converted into Display P3 and tagged.
        let options = DecodingOptions(maxPixelSize: 300)
        let original = try ImageDecoder(options: options).decode(TestImages.sample("Dragonfly.jpg"))
        let p3 = try TestImages.sample("Dragonfly-P3.jpg")
        let converted = try ImageDecoder(options: options).decode(p3)
        var asIs = options
        asIs.colorManagement = .preserveSource
        let unconverted = try ImageDecoder(options: asIs).decode(p3)
        let convertedError = TestImages.meanDifference(original, converted)
        let unconvertedError = TestImages.meanDifference(original, Self.tagged(unconverted, nil))
        #expect(convertedError < 1.5, "converted differs from the original by \(convertedError) on average")
        #expect(unconvertedError > 3 * convertedError, "unconverted \(unconvertedError), converted \(convertedError)")
    }
}
