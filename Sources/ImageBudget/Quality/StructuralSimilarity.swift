import Foundation

/// SSIM (Wang, Bovik, Sheikh, Simoncelli 2004) on luma: an 11×11 Gaussian window with
/// σ = 1.5, population (co)variances, K1 = 0.01, K2 = 0.03, range 255. It matches
/// scikit-image's `structural_similarity(..., gaussian_weights=True, sigma=1.5,
/// use_sample_covariance=False, data_range=255)`, including its mean over the pixels at least
/// one window radius from the border (checked against committed fixtures).
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

    /// Mean SSIM of two planes of the same size, in [-1, 1]; 1 means identical.
    public static func score(_ x: LumaPlane, _ y: LumaPlane) -> Double {
        precondition(x.width == y.width && x.height == y.height, "SSIM needs planes of one size")
        let (width, height) = (x.width, x.height)
        guard width > 2 * radius, height > 2 * radius else { return globalScore(x.values, y.values) }
        // Filter only where the whole window fits: those are the pixels averaged at the end,
        // so no border handling is needed.
        let innerWidth = width - 2 * radius
        let innerHeight = height - 2 * radius
        // Five planes (μx, μy, E[x²], E[y²], E[xy]) after the horizontal pass, one after another.
        let planeSize = innerWidth * height
        var horizontal = [Float](repeating: 0, count: 5 * planeSize)
        var sums = [Float](repeating: 0, count: 5 * innerWidth)
        var total = 0.0
        x.values.withUnsafeBufferPointer { xs in
            y.values.withUnsafeBufferPointer { ys in
                window.withUnsafeBufferPointer { window in
                    horizontal.withUnsafeMutableBufferPointer { planes in
                        let planes = planes.baseAddress!
                        for row in 0..<height {
                            let xRow = xs.baseAddress! + row * width
                            let yRow = ys.baseAddress! + row * width
                            let out = row * innerWidth
                            for column in 0..<innerWidth {
                                var (mx, my, xx, yy, xy): (Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0)
                                for tap in 0...(2 * radius) {
                                    let weight = window[tap]
                                    let a = xRow[column + tap], b = yRow[column + tap]
                                    mx += weight * a
                                    my += weight * b
                                    xx += weight * a * a
                                    yy += weight * b * b
                                    xy += weight * a * b
                                }
                                planes[out + column] = mx
                                planes[planeSize + out + column] = my
                                planes[2 * planeSize + out + column] = xx
                                planes[3 * planeSize + out + column] = yy
                                planes[4 * planeSize + out + column] = xy
                            }
                        }
                        sums.withUnsafeMutableBufferPointer { sums in
                            let sums = sums.baseAddress!
                            for row in 0..<innerHeight {
                                for plane in 0..<5 {
                                    let sum = sums + plane * innerWidth
                                    for index in 0..<innerWidth { sum[index] = 0 }
                                    for tap in 0...(2 * radius) {
                                        let weight = window[tap]
                                        let line = planes + plane * planeSize + (row + tap) * innerWidth
                                        for index in 0..<innerWidth { sum[index] += weight * line[index] }
                                    }
                                }
                                var rowTotal: Float = 0
                                for index in 0..<innerWidth {
                                    let mx = sums[index], my = sums[innerWidth + index]
                                    let varianceX = sums[2 * innerWidth + index] - mx * mx
                                    let varianceY = sums[3 * innerWidth + index] - my * my
                                    let covariance = sums[4 * innerWidth + index] - mx * my
                                    rowTotal += ((2 * mx * my + c1) * (2 * covariance + c2))
                                        / ((mx * mx + my * my + c1) * (varianceX + varianceY + c2))
                                }
                                total += Double(rowTotal)
                            }
                        }
                    }
                }
            }
        }
        return total / Double(innerWidth * innerHeight)
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
