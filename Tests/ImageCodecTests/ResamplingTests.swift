import Foundation
import TestSupport
import Testing
@testable import ImageCodec

@Suite("Resampling")
struct ResamplingTests {
    @Test("a flat colour stays exactly flat at any size")
    func flatColour() throws {
        let source = TestImages.make(width: 301, height: 199, format: .rgb) { _, _ in [10, 200, 30] }
        for (width, height) in [(300, 198), (150, 99), (37, 29), (1, 1), (301, 1)] {
            let result = try source.resampled(width: width, height: height)
            #expect(result.width == width && result.height == height)
            #expect(result.pixels == [UInt8](repeating: 0, count: width * height).flatMap { _ in [10, 200, 30] as [UInt8] })
        }
    }

    @Test("an axis kept at its size is copied exactly, in every pixel format", arguments: [PixelFormat.gray, .grayAlpha, .rgb, .rgba])
    func keptAxisIsCopied(format: PixelFormat) throws {
        var generator = SeededGenerator()
        // Odd widths: the RGB store writes a row's last pixel on its own. Alpha never 0, whose
        // colour is not kept.
        let source = TestImages.make(width: 37, height: 23, format: format) { _, _ in
            (0..<format.channels).map { channel in
                format.hasAlpha && channel == format.channels - 1
                    ? UInt8.random(in: 1...255, using: &generator) : UInt8.random(in: 0...255, using: &generator)
            }
        }
        #expect(try source.resampled(width: 37, height: 23).pixels == source.pixels, "\(generator.replay)")
        // Only the vertical pass works, so mirroring the columns mirrors the result exactly.
        let shrunk = try source.resampled(width: 37, height: 11)
        let mirrored = TestImages.make(width: 37, height: 23, format: format) { x, y in
            let at = (y * 37 + 36 - x) * format.channels
            return Array(source.pixels[at..<(at + format.channels)])
        }
        let shrunkMirror = try mirrored.resampled(width: 37, height: 11)
        for y in 0..<11 {
            for x in 0..<37 {
                let (at, mirrorAt) = ((y * 37 + x) * format.channels, (y * 37 + 36 - x) * format.channels)
                #expect(
                    shrunk.pixels[at..<(at + format.channels)] == shrunkMirror.pixels[mirrorAt..<(mirrorAt + format.channels)],
                    "x=\(x) y=\(y), \(generator.replay)")
            }
        }
    }

    @Test("vector rounding to bytes equals rounding half up and clamping, ties and overshoot included")
    func vectorRounding() {
        var generator = SeededGenerator()
        var values: [Float] = stride(from: -300, through: 600, by: 0.25).map { Float($0) }
        for tie in stride(from: Float(-2.5), through: 256.5, by: 1) { values += [tie.nextDown, tie, tie.nextUp] }
        values += (0..<10_000).map { _ in Float.random(in: -1000...1000, using: &generator) }
        for start in Swift.stride(from: 0, to: values.count - 3, by: 4) {
            let lanes = SIMD4(values[start], values[start + 1], values[start + 2], values[start + 3])
            let bytes = SIMD4<Float>.bytes(lanes)
            for lane in 0..<4 {
                // In Double: in Float, 0.5.nextDown + 0.5 rounds to 1.
                let expected = UInt8(min(max((Double(lanes[lane]) + 0.5).rounded(.down), 0), 255))
                #expect(bytes[lane] == expected, "\(lanes[lane]), \(generator.replay)")
            }
        }
    }

    @Test("kernel samples carried by angle addition equal the closed form, at zero, inside and past the radius")
    func kernelSamples() {
        var generator = SeededGenerator()
        // The closed form: 3 sin(πx) sin(πx/3) / (πx)², 1 at 0, 0 from the radius on.
        func lanczos(_ x: Double) -> Double {
            if abs(x) < 1e-9 { return 1 }
            if abs(x) >= 3 { return 0 }
            return 3 * sin(.pi * x) * sin(.pi * x / 3) / ((.pi * x) * (.pi * x))
        }
        // Steps of reductions up to 64× (1/64) and of enlargements (1), starting anywhere a
        // first tap can: up to a tap before -radius, exactly on zero, and past the radius.
        var cases: [(start: Double, step: Double, count: Int)] = [(-3, 0.5, 13), (-2.75, 0.25, 25), (0, 1, 4), (-6.5, 1, 14)]
        for _ in 0..<2_000 {
            let step = 1 / Double.random(in: 1...64, using: &generator)
            let count = Int((6 / step).rounded(.up)) + 2
            cases.append((start: -3 - Double.random(in: 0...1, using: &generator) * step, step: step, count: count))
        }
        for (start, step, count) in cases {
            var samples = [Double](repeating: .nan, count: count)
            samples.withUnsafeMutableBufferPointer { LanczosKernel.sample(from: start, step: step, into: $0) }
            let worst = (0..<count).map { abs(samples[$0] - lanczos(start + Double($0) * step)) }.max() ?? 0
            // Far below what the Float taps keep (half an ulp of a 0.1 tap is 3.7e-9).
            #expect(worst < 1e-10, "start \(start), step \(step), \(count) taps: worst \(worst), \(generator.replay)")
        }
    }

    @Test("a horizontal gradient keeps its local averages")
    func gradient() throws {
        // Value = x, so each output pixel should be close to the mean of the source span it covers.
        let source = TestImages.make(width: 256, height: 16, format: .gray) { x, _ in [UInt8(x)] }
        let result = try source.resampled(width: 64, height: 4)
        for x in 2..<62 { // away from the edges, where the kernel is clipped
            let expected = Double(x * 4) + 1.5
            for y in 0..<4 {
                #expect(abs(Double(result.pixels[y * 64 + x]) - expected) <= 1, "x=\(x) y=\(y)")
            }
        }
    }

    @Test("a one-pixel checkerboard shrinks to even grey, not to aliasing patterns")
    func checkerboardAntialiasing() throws {
        let source = TestImages.make(width: 400, height: 400, format: .gray) { x, y in [(x + y) % 2 == 0 ? 255 : 0] }
        let result = try source.resampled(width: 100, height: 100)
        for y in 3..<97 {
            for x in 3..<97 {
                let value = Int(result.pixels[y * 100 + x])
                #expect(abs(value - 128) <= 2, "(\(x), \(y)) = \(value)")
            }
        }
    }

    @Test("colour bars keep their exact colours away from the bar edges")
    func colourBars() throws {
        let bars: [[UInt8]] = [
            [255, 255, 255], [255, 255, 0], [0, 255, 255], [0, 255, 0],
            [255, 0, 255], [255, 0, 0], [0, 0, 255], [0, 0, 0]
        ]
        let source = TestImages.make(width: 512, height: 64, format: .rgb) { x, _ in bars[x / 64] }
        let result = try source.resampled(width: 128, height: 16)
        for (index, bar) in bars.enumerated() {
            let centre = index * 16 + 8
            #expect(Array(result.pixel(x: centre, y: 8)) == bar, "bar \(index)")
        }
    }

    @Test("transparent pixels do not bleed their colour into opaque neighbours")
    func premultipliedAlpha() throws {
        // Left half opaque red; right half fully transparent but green.
        let source = TestImages.make(width: 64, height: 8, format: .rgba) { x, _ in x < 32 ? [255, 0, 0, 255] : [0, 255, 0, 0] }
        let result = try source.resampled(width: 16, height: 2)
        for x in 0..<16 {
            let pixel = Array(result.pixel(x: x, y: 1))
            if pixel[3] > 0 {
                #expect(pixel[1] == 0 && pixel[0] >= 250, "x=\(x) \(pixel)")
            }
        }
        #expect(Array(result.pixel(x: 0, y: 0))[3] == 255)
        #expect(Array(result.pixel(x: 15, y: 0))[3] == 0)
    }

    @Test("target sizes keep the aspect ratio, never upscale and never reach zero")
    func targetSizes() {
        func fitted(_ width: Int, _ height: Int, _ limit: Int?) -> (Int, Int) {
            let plan = ResizePlan(limit.map(Resize.maxPixelSize), sourceWidth: width, sourceHeight: height)
            return (plan.width, plan.height)
        }
        #expect(fitted(4000, 3000, 1080) == (1080, 810))
        #expect(fitted(3000, 4000, 1080) == (810, 1080))
        #expect(fitted(800, 600, 1080) == (800, 600))
        #expect(fitted(10000, 1, 100) == (100, 1))
        #expect(fitted(800, 600, nil) == (800, 600))
    }

    @Test("the DCT scale is the smallest M/8 that still leaves its headroom to Lanczos: 1.75×, 2× at 1/8 and 2/8")
    func jpegScale() {
        // Headroom 1: just cover the target.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 5120, height: 2880), target: (1080, 608), headroom: 1, boxHeadroom: 1) == 2)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 4000, height: 3000), target: (500, 375), headroom: 1, boxHeadroom: 1) == 1)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 4000, height: 3000), target: (501, 376), headroom: 1, boxHeadroom: 1) == 2)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 2560, height: 1600), target: (1080, 675), headroom: 1, boxHeadroom: 1) == 4)
        // The exact scaled size, not libjpeg's rounded-up one: 2048×1350 into 512 px is 512×338;
        // 2/8 gives 337.5 rows (338 from libjpeg), which does not cover 338, so 3/8, as Pillow's
        // draft and imgproxy would not take 2/8 either.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 2048, height: 1350), target: (512, 338), headroom: 1, boxHeadroom: 1) == 3)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 2048, height: 1352), target: (512, 338), headroom: 1, boxHeadroom: 1) == 2)
        // 1.75× at the low-pass scales: 2560 → 1080 needs 1890 px, 5/8 is 1600, 6/8 1920.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 2560, height: 1600), target: (1080, 675)) == 6)
        // 5120 → 1080: 2/8 (1280) would need 2160; 3/8 is 1920 ≥ 1890.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 5120, height: 2880), target: (1080, 608)) == 3)
        // 3840 → 1080 (Elephants-q90.jpg): 4/8 is 1920, 1.78×, with the engine's IDCT; libjpeg's
        // averaging 4/8 needs 2×, so 5/8 (2400).
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 3840, height: 2160), target: (1080, 608)) == 4)
        #expect(
            TargetSize.jpegScaleNumerator(crop: PixelRect(width: 3840, height: 2160), target: (1080, 608), boxScales: TargetSize.libjpegBoxScales)
                == 5)
        // 3840 → 1280: 4/8 leaves 1.5× (lost 0.0015 SSIM on Elephants-q90.jpg); 5/8.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 3840, height: 2160), target: (1280, 720)) == 5)
        // 2560 → 640 (Path.jpg): 3/8 leaves 1.5× (lost 0.0022); 4/8.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 2560, height: 1600), target: (640, 400)) == 4)
        // 5120 → 1600 (SafeLanding.jpg): 4/8 leaves 1.6× (lost 0.0017); 5/8.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 5120, height: 2880), target: (1600, 900)) == 5)
        // A 2880×2880 crop → 800×800 (SafeLanding.jpg filled): 4/8 leaves 1.8×.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 2880, height: 2880), target: (800, 800)) == 4)
        // 2× at 2/8: 3840 → 512 at 2/8 is 960, 1.875× (lost 0.0019), so 3/8; 4000 → 500 at 2/8 is exactly 2×.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 3840, height: 2160), target: (512, 288)) == 3)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 4000, height: 3000), target: (500, 375)) == 2)
        // 1/8 is the DC term alone: 6000 → 375 at 1/8 is 750, exactly 2×.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 6000, height: 4000), target: (375, 250)) == 1)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 6000, height: 4000), target: (376, 251)) == 2)
        // Never more than full size.
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 800, height: 600), target: (800, 600)) == 8)
        #expect(TargetSize.jpegScaleNumerator(crop: PixelRect(width: 800, height: 600), target: (700, 525)) == 8)
    }
}
