import Foundation

/// Where ``Gravity/smart`` centres a crop: the point that draws the eye, found as libvips'
/// "attention" strategy (the one imgproxy's `g:sm` uses) finds it.
///
/// On a small decode of the image, in CIELAB: the Sobel edge strength of lightness, plus 255
/// where the colour is a skin tone (a in 3…22, b in 4…31, L ≥ 15) and 255 where it is strongly
/// saturated (chroma above 60). That map is averaged onto a 32 × 32 grid, blurred with a σ that
/// grows with the crop (a larger window looks at a larger neighbourhood), and the crop is
/// centred on the grid's hottest cell. The real decode then crops there, as a focus point.
enum AttentionFocus {
    /// The analysis decode's longest side is the crop's scale, within these: at least 2 pixels
    /// per grid cell, and at most a few milliseconds of work for the largest outputs.
    static let minimumSide = 64
    static let maximumSide = 512
    static let grid = 32

    /// The focus point for a crop window of `crop` (fractions of the image's width and height)
    /// in `bitmap`, upright.
    static func focus(in bitmap: Bitmap, crop: (width: Double, height: Double)) -> Gravity {
        let (width, height) = (bitmap.width, bitmap.height)
        var cells = [Float](repeating: 0, count: grid * grid)
        var counts = [Float](repeating: 0, count: grid * grid)
        let lab = Self.lab(bitmap)
        for y in 0..<height {
            let cellRow = (y * grid / height) * grid
            for x in 0..<width {
                let index = y * width + x
                // Sobel on L, edges repeated.
                @inline(__always) func l(_ dx: Int, _ dy: Int) -> Float {
                    lab.l[min(max(y + dy, 0), height - 1) * width + min(max(x + dx, 0), width - 1)]
                }
                let gx = l(1, -1) + 2 * l(1, 0) + l(1, 1) - l(-1, -1) - 2 * l(-1, 0) - l(-1, 1)
                let gy = l(-1, 1) + 2 * l(0, 1) + l(1, 1) - l(-1, -1) - 2 * l(0, -1) - l(1, -1)
                let (a, b) = (lab.a[index], lab.b[index])
                let skin: Float = (3...22).contains(a) && (4...31).contains(b) && lab.l[index] >= 15 ? 255 : 0
                let saturated: Float = a * a + b * b > 60 * 60 ? 255 : 0
                let cell = cellRow + x * grid / width
                cells[cell] += abs(gx) + abs(gy) + skin + saturated
                counts[cell] += 1
            }
        }
        for cell in cells.indices where counts[cell] > 0 { cells[cell] /= counts[cell] }
        let sigma = (pow(crop.width * Double(grid), 2) + pow(crop.height * Double(grid), 2)).squareRoot() / 6
        let blurred = blurredGrid(cells, sigma: Float(max(sigma, 0.5)))
        // The first hottest cell in raster order, so equal scores give one answer.
        var best = 0
        for cell in blurred.indices where blurred[cell] > blurred[best] { best = cell }
        // The cell's top-left corner, as libvips places it.
        return .focus(x: Double(best % grid) / Double(grid), y: Double(best / grid) / Double(grid))
    }

    /// L*, a*, b* (D65) of every pixel; gray images have a* = b* = 0.
    private static func lab(_ bitmap: Bitmap) -> (l: [Float], a: [Float], b: [Float]) {
        let count = bitmap.width * bitmap.height
        var (l, a, b) = ([Float](repeating: 0, count: count), [Float](repeating: 0, count: count), [Float](repeating: 0, count: count))
        let channels = bitmap.format.channels
        let colour = bitmap.format == .rgb || bitmap.format == .rgba
        @inline(__always) func f(_ t: Float) -> Float { t > 216 / 24389 ? cbrtf(t) : (24389 / 27 * t + 16) / 116 }
        bitmap.pixels.withUnsafeBufferPointer { pixels in
            for index in 0..<count {
                let at = index * channels
                let red = linear[Int(pixels[at])]
                let (green, blue) = colour ? (linear[Int(pixels[at + 1])], linear[Int(pixels[at + 2])]) : (red, red)
                let fy = f(0.212_672_9 * red + 0.715_152_2 * green + 0.072_175 * blue)
                let fx = f((0.412_456_4 * red + 0.357_576_1 * green + 0.180_437_5 * blue) / 0.950_47)
                let fz = f((0.019_333_9 * red + 0.119_192 * green + 0.950_304_1 * blue) / 1.088_83)
                l[index] = 116 * fy - 16
                a[index] = colour ? 500 * (fx - fy) : 0
                b[index] = colour ? 200 * (fy - fz) : 0
            }
        }
        return (l, a, b)
    }

    /// sRGB byte → linear light.
    private static let linear: [Float] = (0..<256).map { value in
        let c = Float(value) / 255
        return c <= 0.040_45 ? c / 12.92 : powf((c + 0.055) / 1.055, 2.4)
    }

    /// A separable Gaussian blur of the grid, edges repeated.
    private static func blurredGrid(_ cells: [Float], sigma: Float) -> [Float] {
        // Taps down to a fifth of the peak, as libvips' gaussblur (its min_ampl) cuts its mask.
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
