import CImageKernels
import Foundation

/// SSIM (Wang, Bovik, Sheikh, Simoncelli 2004) on luma: an 11×11 Gaussian window with
/// σ = 1.5, population (co)variances, K1 = 0.01, K2 = 0.03, range 255. It matches
/// scikit-image's `structural_similarity(..., gaussian_weights=True, sigma=1.5,
/// use_sample_covariance=False, data_range=255)`, including its mean over the pixels at least
/// one window radius from the border (checked against committed fixtures).
///
/// When one reference is compared with many candidates (the budget search), `Reference`
/// keeps the reference's filtered statistics so each comparison filters three planes, not five.
public enum StructuralSimilarity {
    static let radius = 5
    static let sigma = 1.5
    private static let c1 = Float((0.01 * 255) * (0.01 * 255))
    private static let c2 = Float((0.03 * 255) * (0.03 * 255))

    /// The Gaussian window, truncated at 3.5 σ like scipy's `gaussian_filter`.
    static let window: [Float] = {
        let weights = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let sum = weights.reduce(0, +)
        return weights.map { Float($0 / sum) }
    }()

    /// A reference image with its windowed mean and mean square precomputed.
    public struct Reference: Sendable {
        /// The reference luma.
        public let plane: LumaPlane
        /// Windowed E[x] and E[x²] over the inner region, one plane after the other.
        let statistics: [Float]

        /// Precomputes the windowed statistics of `plane`.
        public init(_ plane: LumaPlane) {
            self.plane = plane
            guard StructuralSimilarity.isWindowed(plane) else {
                statistics = []
                return
            }
            let innerWidth = plane.width - 2 * radius
            let innerCount = innerWidth * (plane.height - 2 * radius)
            var statistics = [Float](repeating: 0, count: 2 * innerCount)
            statistics.withUnsafeMutableBufferPointer { statistics in
                StructuralSimilarity.filter(planes: 2, width: plane.width, height: plane.height) { row, out in
                    plane.values.withUnsafeBufferPointer { values in
                        let x = values.baseAddress! + row * plane.width
                        let (means, squares) = (out, out + plane.width)
                        for column in 0..<plane.width {
                            means[column] = x[column]
                            squares[column] = x[column] * x[column]
                        }
                    }
                } consume: { row, sums in
                    for plane in 0..<2 {
                        (statistics.baseAddress! + plane * innerCount + row * innerWidth)
                            .update(from: sums + plane * innerWidth, count: innerWidth)
                    }
                }
            }
            self.statistics = statistics
        }
    }

    /// Mean SSIM of two planes of the same size, in [-1, 1]; 1 means identical.
    public static func score(_ x: LumaPlane, _ y: LumaPlane) -> Double {
        score(Reference(x), y)
    }

    /// Mean SSIM of `y` against a prepared reference of the same size.
    public static func score(_ reference: Reference, _ y: LumaPlane) -> Double {
        let x = reference.plane
        precondition(x.width == y.width && x.height == y.height, "SSIM needs planes of one size")
        guard isWindowed(x) else { return globalScore(x.values, y.values) }
        let (width, height) = (x.width, x.height)
        let innerWidth = width - 2 * radius
        let innerCount = innerWidth * (height - 2 * radius)
        var total = 0.0
        reference.statistics.withUnsafeBufferPointer { statistics in
            x.values.withUnsafeBufferPointer { xs in
                y.values.withUnsafeBufferPointer { ys in
                    filter(planes: 3, width: width, height: height) { row, out in
                        let (xRow, yRow) = (xs.baseAddress! + row * width, ys.baseAddress! + row * width)
                        // One pointer per plane: index sums like `width + column` carry overflow
                        // checks that keep the loop from vectorising.
                        let (means, squares, products) = (out, out + width, out + 2 * width)
                        for column in 0..<width {
                            means[column] = yRow[column]
                            squares[column] = yRow[column] * yRow[column]
                            products[column] = xRow[column] * yRow[column]
                        }
                    } consume: { row, sums in
                        let means = statistics.baseAddress! + row * innerWidth
                        total += Double(
                            rowSum(
                                mx: means, xx: means + innerCount, my: sums, yy: sums + innerWidth,
                                xy: sums + 2 * innerWidth, count: innerWidth))
                    }
                }
            }
        }
        return total / Double(innerCount)
    }

    /// Sum of the SSIM map over one row, from the windowed statistics: eight lane sums from
    /// `iec_ssim_row_lanes` (on the CPU's widest version; a scalar loop cannot vectorise a float
    /// sum, and the division per pixel made it half the cost of a score), added up, then the
    /// last few columns through `iec_ssim_pixel`, the same definition. The order is fixed on every CPU, so scores stay deterministic.
    private static func rowSum(
        mx: UnsafePointer<Float>, xx: UnsafePointer<Float>, my: UnsafePointer<Float>,
        yy: UnsafePointer<Float>, xy: UnsafePointer<Float>, count: Int
    ) -> Float {
        var lanes = SIMD8<Float>()
        let summed = withUnsafeMutableBytes(of: &lanes) { lanes in
            iec_ssim_row_lanes(mx, xx, my, yy, xy, count, c1, c2, lanes.baseAddress!.assumingMemoryBound(to: Float.self))
        }
        var sum = lanes.sum()
        for column in summed..<count { sum += iec_ssim_pixel(mx[column], xx[column], my[column], yy[column], xy[column], c1, c2) }
        return sum
    }

    static func isWindowed(_ plane: LumaPlane) -> Bool {
        plane.width > 2 * radius && plane.height > 2 * radius
    }

    /// Gaussian-filters `planes` quantities whose source rows `fill(row, out)` writes (plane
    /// after plane, `width` each), and hands each filtered row of the inner region, where the
    /// whole window fits, to `consume(innerRow, sums)` (plane after plane, inner width each).
    /// Only the inner pixels are averaged, so no border handling is needed. Horizontally
    /// filtered rows wait in a ring of window height, so memory stays a few rows; taps are the
    /// outer loops so the column loops vectorise.
    private static func filter(
        planes: Int, width: Int, height: Int, fill: (Int, UnsafeMutablePointer<Float>) -> Void,
        consume: (Int, UnsafePointer<Float>) -> Void
    ) {
        let taps = 2 * radius + 1
        let innerWidth = width - 2 * radius
        var sources = [Float](repeating: 0, count: planes * width)
        var ring = [Float](repeating: 0, count: planes * taps * innerWidth)
        var sums = [Float](repeating: 0, count: planes * innerWidth)
        window.withUnsafeBufferPointer { window in
            sources.withUnsafeMutableBufferPointer { sources in
                ring.withUnsafeMutableBufferPointer { ring in
                    sums.withUnsafeMutableBufferPointer { sums in
                        for row in 0..<height {
                            fill(row, sources.baseAddress!)
                            for plane in 0..<planes {
                                let source = sources.baseAddress! + plane * width
                                let out = ring.baseAddress! + (plane * taps + row % taps) * innerWidth
                                convolve(window.baseAddress!, into: out, count: innerWidth) { UnsafePointer(source + $0) }
                            }
                            guard row >= taps - 1 else { continue }
                            let top = row - (taps - 1)
                            for plane in 0..<planes {
                                let lines = ring.baseAddress! + plane * taps * innerWidth
                                convolve(window.baseAddress!, into: sums.baseAddress! + plane * innerWidth, count: innerWidth) {
                                    UnsafePointer(lines + ((top + $0) % taps) * innerWidth)
                                }
                            }
                            consume(top, UnsafePointer(sums.baseAddress!))
                        }
                    }
                }
            }
        }
    }

    /// out[c] = Σ window[t] · line(t)[c] over the 2·radius + 1 taps, pairing the taps the
    /// symmetric window weighs alike (half the multiplications), in the order
    /// `iec_convolve_symmetric` gives, on the CPU's widest version: a score's filtering is most
    /// of its time, and every version gives the same floats, so scores do not depend on the CPU.
    static func convolve(
        _ window: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, count: Int,
        line: (Int) -> UnsafePointer<Float>
    ) {
        withUnsafeTemporaryAllocation(of: UnsafePointer<Float>?.self, capacity: 2 * radius + 1) { lines in
            for tap in lines.indices { lines[tap] = line(tap) }
            iec_convolve_symmetric(lines.baseAddress!, window, Int32(radius), out, count)
        }
    }

    /// One window over the whole image, for images smaller than the Gaussian window.
    private static func globalScore(_ x: [Float], _ y: [Float]) -> Double {
        let count = Double(x.count)
        let mx = x.reduce(0.0) { $0 + Double($1) } / count
        let my = y.reduce(0.0) { $0 + Double($1) } / count
        var (vx, vy, cov) = (0.0, 0.0, 0.0)
        for (a, b) in zip(x, y) {
            vx += (Double(a) - mx) * (Double(a) - mx)
            vy += (Double(b) - my) * (Double(b) - my)
            cov += (Double(a) - mx) * (Double(b) - my)
        }
        (vx, vy, cov) = (vx / count, vy / count, cov / count)
        let (k1, k2) = (Double(c1), Double(c2))
        return ((2 * mx * my + k1) * (2 * cov + k2)) / ((mx * mx + my * my + k1) * (vx + vy + k2))
    }
}
