import Foundation
import Testing
import TestSupport

@testable import ImageCodec

/// Blur, sharpen and pixelate against references computed here from their definitions.
@Suite("Filters: blur, sharpen, pixelate")
struct FilterTests {
    /// Seeded noise over a gradient, RGB.
    static func noise(_ width: Int, _ height: Int, generator: inout SeededGenerator) throws -> Bitmap {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<3 {
                    let base = (x * 4 + y * 2 + channel * 40) % 200
                    pixels.append(UInt8(base + Int.random(in: 0...55, using: &generator)))
                }
            }
        }
        return try Bitmap(width: width, height: height, format: .rgb, pixels: pixels)
    }

    /// A true Gaussian (radius 4σ, edges repeated, weights normalised), in Double.
    static func gaussian(_ bitmap: Bitmap, sigma: Double) -> [Double] {
        let radius = Int((4 * sigma).rounded(.up))
        let weights = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = weights.reduce(0, +)
        let (w, h, c) = (bitmap.width, bitmap.height, bitmap.format.channels)
        var values = bitmap.pixels.map(Double.init)
        var next = values
        for (dx, dy) in [(1, 0), (0, 1)] {
            for y in 0..<h {
                for x in 0..<w {
                    for channel in 0..<c {
                        var sum = 0.0
                        for (index, offset) in (-radius...radius).enumerated() {
                            let sx = min(max(x + dx * offset, 0), w - 1), sy = min(max(y + dy * offset, 0), h - 1)
                            sum += weights[index] * values[(sy * w + sx) * c + channel]
                        }
                        next[(y * w + x) * c + channel] = sum / total
                    }
                }
            }
            values = next
        }
        return values
    }

    @Test("the blur is a Gaussian within about a level", arguments: [0.6, 1.0, 1.9, 2.5, 6.0])
    func blurMatchesGaussian(sigma: Double) throws {
        var generator = SeededGenerator()
        let seed = generator.replay
        let image = try Self.noise(64, 48, generator: &generator)
        let blurred = try image.blurred(sigma: sigma)
        let reference = Self.gaussian(image, sigma: sigma)
        // Three box blurs (σ ≥ 2) clamp the edges pass by pass: compared inside 3σ of them.
        let margin = sigma >= 2 ? Int((3 * sigma).rounded(.up)) : 0
        var errors: [Double] = []
        for y in margin..<(48 - margin) {
            for x in margin..<(64 - margin) {
                for c in 0..<3 {
                    let index = (y * 64 + x) * 3 + c
                    errors.append(abs(Double(blurred.pixels[index]) - reference[index]))
                }
            }
        }
        let mean = errors.reduce(0, +) / Double(errors.count)
        #expect(mean < 0.8 && errors.max()! < 6, "seed \(seed), σ \(sigma): mean \(mean), max \(errors.max()!)")
        #expect(zip(blurred.pixels, image.pixels).contains { $0 != $1 }, "it changed something")
    }

    @Test("flat stays flat under every filter; sigma 0 and size 1 change nothing; out-of-range arguments are errors")
    func flatAndIdentity() throws {
        let flat = try Bitmap(width: 30, height: 20, format: .rgba, pixels: [UInt8]((0..<600).flatMap { _ in [90, 160, 20, 255] }))
        #expect(try flat.blurred(sigma: 7) == flat && (try flat.sharpened(sigma: 2)) == flat && (try flat.pixelated(size: 7)) == flat)
        var generator = SeededGenerator()
        let image = try Self.noise(10, 10, generator: &generator)
        #expect(try image.blurred(sigma: 0) == image && (try image.pixelated(size: 1)) == image)
        #expect(throws: ImageCodecError.self) { try image.blurred(sigma: 101) }
        #expect(throws: ImageCodecError.self) { try image.sharpened(sigma: .nan) }
        #expect(throws: ImageCodecError.self) { try image.pixelated(size: 0) }
    }

    @Test("sharpen steepens an edge: it overshoots on both sides, as an unsharp mask does")
    func sharpenOvershoots() throws {
        // A vertical edge 60 | 180, gray.
        let edge = try Bitmap(width: 20, height: 4, format: .gray, pixels: (0..<80).map { $0 % 20 < 10 ? 60 : 180 })
        let sharp = try edge.sharpened(sigma: 1.5)
        #expect(sharp.pixels[9] < 60 && sharp.pixels[10] > 180, "\(sharp.pixels[8...11])")
        #expect(sharp.pixels[0] == 60 && sharp.pixels[19] == 180, "far from the edge nothing moves")
    }

    @Test("pixelate fills each block, the cut ones at the edges too, with its mean")
    func pixelateMeans() throws {
        var generator = SeededGenerator()
        let seed = generator.replay
        let image = try Self.noise(20, 12, generator: &generator)
        let blocks = try image.pixelated(size: 8)
        for (top, left) in [(0, 0), (0, 8), (0, 16), (8, 0), (8, 16)] {
            let (bottom, right) = (min(top + 8, 12), min(left + 8, 20))
            for channel in 0..<3 {
                var sum = 0
                for y in top..<bottom { for x in left..<right { sum += Int(image.pixel(x: x, y: y)[image.pixel(x: x, y: y).startIndex + channel]) } }
                let count = (bottom - top) * (right - left)
                let mean = UInt8((sum + count / 2) / count)
                for y in top..<bottom {
                    for x in left..<right {
                        #expect(blocks.pixel(x: x, y: y)[blocks.pixel(x: x, y: y).startIndex + channel] == mean, "seed \(seed): (\(x), \(y))")
                    }
                }
            }
        }
    }
}
