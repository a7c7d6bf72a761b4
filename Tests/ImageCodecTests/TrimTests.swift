import Foundation
import Testing
@testable import ImageCodec

/// `DecodingOptions.trim` (imgproxy's `trim`): borders within a threshold of the background are
/// cut off before the region and the resize, found on a decode of its own.
@Suite("Resize: trim")
struct TrimTests {
    /// A `width × height` textured patch (every pixel far from white and black) framed by
    /// `frame` (top, right, bottom, left) of `background`.
    static func framed(width: Int, height: Int, frame: (Int, Int, Int, Int), background: [UInt8] = [255, 255, 255]) -> Bitmap {
        let (top, right, bottom, left) = frame
        return TestImages.make(width: left + width + right, height: top + height + bottom, format: .rgb) { x, y in
            let (cx, cy) = (x - left, y - top)
            guard (0..<width).contains(cx), (0..<height).contains(cy) else { return background }
            let value = UInt8(40 + (cx * 37 + cy * 91 + (cx * cy) % 13) % 160)
            return [value, value / 2 + 30, 255 - value]
        }
    }

    static func decode(_ data: Data, _ trim: Trim?, resize: Resize? = nil, region: CropRegion? = nil) throws -> Bitmap {
        var options = DecodingOptions(resize: resize)
        options.trim = trim
        options.region = region
        return try ImageDecoder(options: options).decode(data)
    }

    @Test("a frame of the background is cut exactly, whatever its sides (PNG)")
    func exactFrame() throws {
        let source = Self.framed(width: 120, height: 80, frame: (13, 40, 5, 27))
        let result = try Self.decode(try ImageEncoder.png(source), Trim(threshold: 10))
        #expect((result.width, result.height) == (120, 80))
        guard (result.width, result.height) == (120, 80) else { return }
        for (x, y) in [(0, 0), (119, 79), (60, 40), (0, 79)] {
            #expect(result.pixel(x: x, y: y) == source.pixel(x: 27 + x, y: 13 + y), "at (\(x), \(y))")
        }
    }

    @Test("equal sides keep the lesser border on both sides of an axis")
    func equalSides() throws {
        let data = try ImageEncoder.png(Self.framed(width: 120, height: 80, frame: (13, 40, 5, 27)))
        // 27 px go from the left and the right (not 40), 5 from the top and the bottom (not 13).
        let horizontal = try Self.decode(data, Trim(threshold: 10, equalHorizontal: true))
        #expect((horizontal.width, horizontal.height) == (120 + 40 - 27, 80))
        let both = try Self.decode(data, Trim(threshold: 10, equalHorizontal: true, equalVertical: true))
        #expect((both.width, both.height) == (120 + 40 - 27, 80 + 13 - 5))
    }

    @Test("the background colour: the corner's by default, or the one named")
    func backgroundColour() throws {
        // A black frame: the corner finds it; naming white finds no white border, so nothing is cut.
        let data = try ImageEncoder.png(Self.framed(width: 50, height: 30, frame: (10, 10, 10, 10), background: [0, 0, 0]))
        let corner = try Self.decode(data, Trim(threshold: 10))
        #expect((corner.width, corner.height) == (50, 30))
        let white = try Self.decode(data, Trim(threshold: 10, color: .white))
        #expect((white.width, white.height) == (70, 50))
        let black = try Self.decode(data, Trim(threshold: 10, color: .black))
        #expect((black.width, black.height) == (50, 30))
    }

    @Test("a near-background frame within the threshold goes; one beyond it stays")
    func threshold() throws {
        let data = try ImageEncoder.png(Self.framed(width: 40, height: 40, frame: (8, 8, 8, 8), background: [240, 240, 240]))
        let within = try Self.decode(data, Trim(threshold: 20, color: .white))
        #expect((within.width, within.height) == (40, 40))
        let beyond = try Self.decode(data, Trim(threshold: 10, color: .white))
        #expect((beyond.width, beyond.height) == (56, 56))
    }

    @Test("a flat image, and dust on the frame, are not what a trim keeps")
    func flatAndDust() throws {
        let flat = TestImages.make(width: 30, height: 20, format: .rgb) { _, _ in [255, 255, 255] }
        let whole = try Self.decode(try ImageEncoder.png(flat), Trim(threshold: 10))
        #expect((whole.width, whole.height) == (30, 20))
        // One dark pixel in the frame's corner: the median ignores it.
        var dusty = Self.framed(width: 40, height: 30, frame: (10, 10, 10, 10))
        var pixels = dusty.pixels
        pixels.replaceSubrange(((2 * dusty.width + 2) * 3)..<((2 * dusty.width + 2) * 3 + 3), with: [0, 0, 0])
        dusty = try Bitmap(width: dusty.width, height: dusty.height, format: .rgb, pixels: pixels)
        let trimmed = try Self.decode(try ImageEncoder.png(dusty), Trim(threshold: 10))
        #expect((trimmed.width, trimmed.height) == (40, 30))
    }

    @Test("a transparent border is cut: alpha is flattened on magenta first")
    func transparentBorder() throws {
        let source = TestImages.make(width: 60, height: 40, format: .rgba) { x, y in
            (15..<45).contains(x) && (10..<30).contains(y) ? [200, 30, 30, 255] : [255, 255, 255, 0]
        }
        let result = try Self.decode(try ImageEncoder.png(source), Trim(threshold: 5))
        #expect((result.width, result.height) == (30, 20))
    }

    @Test("the resize and the region apply to what is left", arguments: [false, true])
    func resizeAfterTrim(jpeg: Bool) throws {
        // 400×200 of content in a frame; trimmed, a 100-wide fit is 100×50 whatever the frame.
        let source = Self.framed(width: 400, height: 200, frame: (100, 300, 20, 60))
        let data = jpeg ? try TestImages.faithfulJPEG(source) : try ImageEncoder.png(source)
        let fit = try Self.decode(data, Trim(threshold: 30), resize: .fit(width: 100, height: 100))
        #expect((fit.width, fit.height) == (100, 50))
        // The region's half is half of the trimmed image, not of the framed one.
        let half = try Self.decode(data, Trim(threshold: 30), region: CropRegion(width: .fraction(0.5), height: .whole, gravity: .west))
        #expect((half.width, half.height) == (200, 200))
    }

    @Test("the window is found on a smaller decode when the output is small, and still cut to the output's pixel")
    func analysisAtTwiceTheBox() throws {
        // 1600×800 content in a 1800×1200 frame; a 200-wide fit analyses at 1024 and still
        // comes out 200×100.
        let source = Self.framed(width: 1600, height: 800, frame: (150, 80, 250, 120))
        let data = try TestImages.faithfulJPEG(source)
        let image = try ImageSource(data: data)
        var options = DecodingOptions(resize: .fit(width: 200, height: 200))
        options.trim = Trim(threshold: 30)
        let resolved = try image.resolvingTrim(options)
        let size = image.size(for: resolved)
        // Within two analysis pixels (1800 / 1024 ≈ 1.8 image pixels) of the true window.
        #expect(abs(size.width - 1600) <= 4 && abs(size.height - 800) <= 4, "\(size)")
        let result = try image.decode(options).bitmap
        #expect((result.width, result.height) == (200, 100))
        // The plan counts the analysis decode.
        var untrimmed = options
        untrimmed.trim = nil
        #expect(try image.plan(options).memoryBytes > image.plan(untrimmed).memoryBytes)
    }

    @Test("a threshold outside 0-255 is refused")
    func refused() throws {
        let data = try ImageEncoder.png(Self.framed(width: 10, height: 10, frame: (1, 1, 1, 1)))
        for threshold in [-1, 256, .nan, .infinity] {
            #expect(throws: ImageCodecError.self, "\(threshold)") { try Self.decode(data, Trim(threshold: threshold)) }
        }
    }
}
