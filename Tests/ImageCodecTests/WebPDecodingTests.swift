import Foundation
import Testing
import TestSupport
@testable import ImageCodec

@Suite("WebP decoding")
struct WebPDecodingTests {
    private func rgba(_ bitmap: Bitmap) -> [UInt8] {
        guard bitmap.format == .rgb else { return bitmap.pixels }
        return stride(from: 0, to: bitmap.pixels.count, by: 3).flatMap { Array(bitmap.pixels[$0..<$0 + 3]) + [255] }
    }

    @Test(
        "lossy, lossy with alpha and lossless decode to exactly the pixels dwebp gives",
        arguments: ["kite.webp", "calla-alpha.webp", "calla-lossless.webp"])
    func matchesDwebp(_ name: String) throws {
        let data = try WebPFixtures.data(name)
        let header = try ImageDecoder.header(of: data)
        let reference = try WebPFixtures.dwebp(WebPFixtures.directory.appendingPathComponent(name))
        #expect(header.format == .webp && (header.width, header.height) == (reference.width, reference.height) && header.bitDepth == 8)
        #expect(header.hasAlpha == name.hasPrefix("calla"))
        let bitmap = try ImageDecoder().decode(data)
        #expect(bitmap.format == (header.hasAlpha ? .rgba : .rgb))
        let same = rgba(bitmap) == reference.rgba
        #expect(same)
    }

    @Test("a lossless WebP of a PNG decodes to the PNG's pixels")
    func losslessIsLossless() throws {
        let webp = try ImageDecoder().decode(try WebPFixtures.data("calla-lossless.webp"))
        let png = try ImageDecoder().decode(try WebPFixtures.data("calla-alpha.png"))
        let same = webp.pixels == png.pixels
        #expect(webp.format == .rgba && png.format == .rgba && same)
    }

    @Test("EXIF orientation 6 in the EXIF chunk: the header says so, the bitmap is upright (300×480)")
    func orientation() throws {
        let data = try WebPFixtures.data("kite-orientation6.webp")
        let header = try ImageDecoder.header(of: data)
        #expect(header.orientation == .right && (header.displayWidth, header.displayHeight) == (300, 480))
        let upright = try ImageDecoder().decode(data)
        let stored = try ImageDecoder().decode(try WebPFixtures.data("kite.webp"))
        let same = try upright.pixels == stored.applying(.right).pixels
        #expect(same && (upright.width, upright.height) == (300, 480))
        // A fill's gravity refers to the upright image: the top of 300×480 is a stored side.
        let top = try ImageDecoder(options: DecodingOptions(resize: .fill(width: 100, height: 100, gravity: .north))).decode(data)
        let reference = try ImageDecoder(options: DecodingOptions(resize: .fill(width: 100, height: 100, gravity: .north)))
            .decode(try ImageEncoder.png(upright))
        #expect((top.width, top.height) == (100, 100) && TestImages.meanDifference(top, reference) < 3)
    }

    @Test("an ICC profile (Display P3) converts to sRGB as the same pixels in a tagged PNG do")
    func iccProfile() throws {
        let tagged = try ImageDecoder().decodeImage(try WebPFixtures.data("kite-p3.webp"))
        var untagged = try ImageDecoder().decode(try WebPFixtures.data("kite.webp"))
        #expect(tagged.warnings.isEmpty && tagged.bitmap.iccProfile == nil)
        #expect(TestImages.meanDifference(tagged.bitmap, untagged) > 1, "the profile was not applied")
        untagged.iccProfile = try ColorFixtures.profile("DisplayP3.icc")
        let viaPNG = try ImageDecoder().decode(try ImageEncoder.png(untagged))
        #expect(TestImages.maxDifference(tagged.bitmap, viaPNG) == 0)
        // Over the limit, the profile is ignored with a warning and the pixels are left as they are.
        var options = DecodingOptions()
        options.limits.maxICCProfileBytes = 100
        let ignored = try ImageDecoder(options: options).decodeImage(try WebPFixtures.data("kite-p3.webp"))
        let plain = try ImageDecoder().decode(try WebPFixtures.data("kite.webp"))
        let same = ignored.bitmap.pixels == plain.pixels
        #expect(ignored.warnings.count == 1 && same)
    }

    @Test("an animation decodes its first frame, not the second (its mirror image)")
    func animationFirstFrame() throws {
        let data = try WebPFixtures.data("kite-animated.webp")
        let header = try ImageDecoder.header(of: data)
        #expect((header.width, header.height) == (480, 300))
        let frame = try ImageDecoder().decode(data).flattened()
        let kite = try ImageDecoder().decode(try SmallPhotos.data("kite.jpg"))
        let mirrored = try ImageDecoder().decode(try ImageEncoder.png(kite.applying(.upMirrored)))
        let (first, second) = (TestImages.meanDifference(frame, kite), TestImages.meanDifference(frame, mirrored))
        #expect(first < 3 && second > 3 * first, "mean difference \(first) to the first frame, \(second) to the second")
    }

    @Test("a first frame smaller than the canvas sits at its offset; the rest of the canvas is transparent")
    func partialFirstFrame() throws {
        let red = try Bitmap(
            width: 32, height: 24, format: .rgb, pixels: [UInt8](repeating: 0, count: 32 * 24 * 3).enumerated().map { $0.offset % 3 == 0 ? 255 : 0 })
        let image = Array(try ImageEncoder.webp(red, options: WebPEncodingOptions(quality: 100)).dropFirst(12))
        let file = WebPFixtures.container(
            WebPFixtures.vp8x(flags: 0x02 | 0x10, width: 64, height: 48) + WebPFixtures.chunk("ANIM", [0, 0, 0, 0, 0, 0])
                + WebPFixtures.anmf(x: 16, y: 8, width: 32, height: 24, image: image))
        let bitmap = try ImageDecoder().decode(file)
        #expect(bitmap.format == .rgba && (bitmap.width, bitmap.height) == (64, 48))
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(bitmap.pixels[(y * 64 + x) * 4..<(y * 64 + x) * 4 + 4]) }
        #expect(pixel(0, 0)[3] == 0 && pixel(15, 20)[3] == 0 && pixel(48, 20)[3] == 0 && pixel(30, 32)[3] == 0)
        #expect(pixel(16, 8)[3] == 255 && pixel(47, 31)[3] == 255 && pixel(30, 20)[0] > 240 && pixel(30, 20)[1] < 16)
    }

    @Test(
        "every resize mode: the planned size, and the pixels of a full decode resampled",
        arguments: [
            Resize.fit(width: 160, height: 160), .fill(width: 120, height: 120), .fillDown(width: 600, height: 200), .force(width: 100, height: 50),
            .maxPixelSize(60)
        ])
    func resizeModes(_ resize: Resize) throws {
        let data = try WebPFixtures.data("kite.webp")
        let decoder = ImageDecoder(options: DecodingOptions(resize: resize))
        let plan = try decoder.plan(data)
        let bitmap = try decoder.decode(data)
        #expect((bitmap.width, bitmap.height) == (plan.width, plan.height))
        // The same resize of the full-size pixels, from a lossless PNG: libwebp's shrink-on-load
        // keeps 2× for Lanczos, so the two agree closely.
        let reference = try ImageDecoder(options: DecodingOptions(resize: resize)).decode(try ImageEncoder.png(ImageDecoder().decode(data)))
        #expect((reference.width, reference.height) == (bitmap.width, bitmap.height))
        #expect(TestImages.meanDifference(bitmap, reference) < 1.5)
    }

    @Test("a reduced decode plans less memory than a full one, and the fast mode less again")
    func scaledDecodePlansLess() throws {
        let data = try TestImages.sample("Kite.jpg")
        let webp = try ImageEncoder.webp(try ImageDecoder().decode(data))
        let full = try ImageDecoder().plan(webp)
        let quality = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 300, height: 300))).plan(webp)
        let fast = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 300, height: 300), fastShrinkOnLoad: true)).plan(webp)
        #expect(quality.memoryBytes < full.memoryBytes / 4 && fast.memoryBytes < quality.memoryBytes)
        let bitmap = try ImageDecoder(options: DecodingOptions(resize: .fit(width: 300, height: 300), fastShrinkOnLoad: true)).decode(webp)
        #expect(max(bitmap.width, bitmap.height) == 300)
    }

    @Test("truncated, corrupt and over-the-limit files: typed errors, nothing decoded")
    func badFiles() throws {
        let data = try WebPFixtures.data("kite.webp")
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder().decode(data.prefix(data.count - 200)) }
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder().decode(data.prefix(20)) }
        var corrupt = [UInt8](data)
        // The VP8 frame's start code (9d 01 2a) follows the chunk header and the 3-byte frame tag.
        #expect(corrupt[23..<26].elementsEqual([0x9D, 0x01, 0x2A]))
        corrupt[24] = 0xFF
        #expect {
            try ImageDecoder().decode(Data(corrupt))
        } throws: { error in
            guard case .corruptData = error as? ImageCodecError else { return false }
            return true
        }
        var limits = DecodingLimits()
        limits.maxPixelCount = 100_000
        #expect(throws: ImageCodecError.tooLarge(width: 480, height: 300, limit: 100_000)) {
            try ImageDecoder.header(of: data, limits: limits)
        }
        // A canvas of 16384² around a 1×1 frame is refused from the header, before libwebp runs.
        let tiny = Array(try ImageEncoder.webp(try Bitmap(width: 2, height: 2, format: .rgb, pixels: [UInt8](repeating: 9, count: 12))).dropFirst(12))
        let huge = WebPFixtures.container(
            WebPFixtures.vp8x(flags: 0x02, width: 16384, height: 16384) + WebPFixtures.chunk("ANIM", [0, 0, 0, 0, 0, 0])
                + WebPFixtures.anmf(x: 0, y: 0, width: 2, height: 2, image: tiny))
        #expect(throws: ImageCodecError.tooLarge(width: 16384, height: 16384, limit: 100_000)) { try ImageDecoder.header(of: huge, limits: limits) }
        // A frame that leaves its canvas, and a chunk that runs past the end.
        let outside = WebPFixtures.container(
            WebPFixtures.vp8x(flags: 0x02, width: 4, height: 4) + WebPFixtures.anmf(x: 4, y: 0, width: 2, height: 2, image: tiny))
        #expect(throws: ImageCodecError.corruptData("the first frame (2×2 at 4,0) leaves the 4×4 canvas")) { try ImageDecoder.header(of: outside) }
        var runaway = [UInt8](WebPFixtures.container(WebPFixtures.chunk("ICCP", [1, 2, 3, 4]) + tiny))
        runaway.replaceSubrange(16..<20, with: WebPFixtures.littleEndian(1 << 30, 4))
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder.header(of: Data(runaway)) }
    }
}
