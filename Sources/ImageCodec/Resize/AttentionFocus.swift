import Foundation

/// Where ``Gravity/smart`` centres a crop: the point that draws the eye, found as libvips'
/// "attention" strategy (the one imgproxy's `g:sm` uses, itself after smartcrop.js) finds it.
///
/// The image, squeezed to a 32 × 32 grid with Lanczos, is scored per cell in CIE XYZ: edges
/// (5 × the absolute Laplacian of Y), skin (100 − 100 × the distance of the colour's direction
/// in XYZ from skin's), and redness (CIELAB a*); cells darker than Y = 5 score only their edges.
/// The scores are blurred with a σ that grows with the crop (a larger window weighs a larger
/// neighbourhood) and the crop is centred on the hottest cell's corner, as libvips places it.
/// The real decode then crops there, as a focus point.
enum AttentionFocus {
    /// The analysis decode's longest side: plenty for a 32-cell grid, a few milliseconds.
    static let analysisSide = 256
    static let grid = 32

    /// The focus point for a crop window of `crop` (fractions of the image's width and height)
    /// in `bitmap`, upright.
    static func focus(in bitmap: Bitmap, crop: (width: Double, height: Double)) throws(ImageCodecError) -> Gravity {
        let cells = try bitmap.resampled(width: grid, height: grid)
        let xyz = Self.xyz(cells)
        var score = [Float](repeating: 0, count: grid * grid) // small: the fixed grid (32 × 32)
        for y in 0..<grid {
            for x in 0..<grid {
                let index = y * grid + x
                // The Laplacian of Y, edges repeated.
                @inline(__always) func luminance(_ dx: Int, _ dy: Int) -> Float {
                    xyz[min(max(y + dy, 0), grid - 1) * grid + min(max(x + dx, 0), grid - 1)].y
                }
                let edges = 5 * abs(4 * luminance(0, 0) - luminance(-1, 0) - luminance(1, 0) - luminance(0, -1) - luminance(0, 1))
                score[index] = edges
                let colour = xyz[index]
                guard colour.y > 5 else { continue }
                let length = (colour * colour).sum().squareRoot()
                let direction = colour / length - SIMD3(0.78, 0.57, 0.44)
                let skin = 100 - 100 * (direction * direction).sum().squareRoot()
                score[index] += skin + redness(colour)
            }
        }
        let sigma = max((pow(crop.width * Double(grid), 2) + pow(crop.height * Double(grid), 2)).squareRoot() / 10, 1)
        let blurred = blurredGrid(score, sigma: Float(sigma))
        // The first hottest cell in raster order, so equal scores give one answer.
        var best = 0
        for cell in blurred.indices where blurred[cell] > blurred[best] { best = cell }
        return .focus(x: Double(best % grid) / Double(grid), y: Double(best / grid) / Double(grid))
    }

    /// CIE XYZ (D65, Y of white = 100) of every cell; gray cells are neutral.
    private static func xyz(_ bitmap: Bitmap) -> [SIMD3<Float>] {
        let channels = bitmap.format.channels
        let colour = bitmap.format == .rgb || bitmap.format == .rgba
        return (0..<(bitmap.width * bitmap.height)).map { index in
            let at = index * channels
            let red = SRGBTransfer.linear[Int(bitmap.pixels[at])]
            let (green, blue) =
                colour ? (SRGBTransfer.linear[Int(bitmap.pixels[at + 1])], SRGBTransfer.linear[Int(bitmap.pixels[at + 2])]) : (red, red)
            return 100
                * SIMD3(
                    0.412_456_4 * red + 0.357_576_1 * green + 0.180_437_5 * blue,
                    0.212_672_9 * red + 0.715_152_2 * green + 0.072_175 * blue,
                    0.019_333_9 * red + 0.119_192 * green + 0.950_304_1 * blue)
        }
    }

    /// CIELAB a* of an XYZ colour (D65).
    private static func redness(_ colour: SIMD3<Float>) -> Float {
        @inline(__always) func f(_ t: Float) -> Float { t > 216 / 24389 ? cbrtf(t) : (24389 / 27 * t + 16) / 116 }
        return 500 * (f(colour.x / 95.047) - f(colour.y / 100))
    }

    /// A separable Gaussian blur of the grid, edges repeated, with taps down to a fifth of the
    /// peak (where libvips' gaussblur cuts its mask).
    private static func blurredGrid(_ cells: [Float], sigma: Float) -> [Float] {
        let radius = min(grid - 1, Int((sigma * (2 * logf(5)).squareRoot()).rounded(.up)))
        var kernel = (-radius...radius).map { expf(-Float($0 * $0) / (2 * sigma * sigma)) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        var pass = cells
        var result = cells
        for y in 0..<grid {
            for x in 0..<grid {
                var sum: Float = 0
                for tap in -radius...radius { sum += kernel[tap + radius] * cells[y * grid + min(max(x + tap, 0), grid - 1)] }
                pass[y * grid + x] = sum
            }
        }
        for y in 0..<grid {
            for x in 0..<grid {
                var sum: Float = 0
                for tap in -radius...radius { sum += kernel[tap + radius] * pass[min(max(y + tap, 0), grid - 1) * grid + x] }
                result[y * grid + x] = sum
            }
        }
        return result
    }
}
